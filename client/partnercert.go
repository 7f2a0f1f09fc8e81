package client

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io/fs"
	"runtime"

	"github.com/xblgo/fgrl/internal/safetext"
	"github.com/xblgo/fgrl/internal/smallfile"
)

// ErrKeyReadable is LoadPartnerCertificate's error for a key file that
// users other than its owner may read or write.
var ErrKeyReadable = errors.New("client: the key file is readable by others (chmod 600 it)")

// maxPEMFile bounds a certificate or key file LoadPartnerCertificate reads.
const maxPEMFile = 64 << 10

// LoadPartnerCertificate reads a Business Partner Certificate (PEM, the
// certificate first, then any of its chain) and its private key (PEM) for
// ServiceSignIn.Certificate. Whoever reads the key signs in as the
// service: a key file that its group or others may read or write is
// refused (ErrKeyReadable), as ssh refuses a private key.
func LoadPartnerCertificate(certFile, keyFile string) (tls.Certificate, error) {
	certPEM, err := readSmall(certFile, false)
	if err != nil {
		return tls.Certificate{}, err
	}
	keyPEM, err := readSmall(keyFile, true)
	if err != nil {
		return tls.Certificate{}, err
	}
	c, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("client: partner certificate %s and key %s: %v", safetext.Quote(certFile, 200), safetext.Quote(keyFile, 200), err)
	}
	return c, nil
}

// readSmall reads a regular file of at most maxPEMFile bytes
// (smallfile.Read: a FIFO put at name is refused, not waited on); a
// private one must be its owner's alone (the mode of the file opened, not
// of a name that may change between a check and the read).
func readSmall(name string, private bool) ([]byte, error) {
	b, mode, err := smallfile.Read(name, maxPEMFile)
	if err != nil {
		return nil, fileError(name, err)
	}
	if private && runtime.GOOS != "windows" && mode.Perm()&0o077 != 0 { // no such mode bits on Windows
		return nil, fmt.Errorf("%w: %s is %v", ErrKeyReadable, safetext.Quote(name, 200), mode.Perm())
	}
	return b, nil
}

// fileError is err about the file name, the name quoted (a *fs.PathError
// would show it as it is, escapes and all): errors.Is still finds the
// cause, such as fs.ErrNotExist.
func fileError(name string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return fmt.Errorf("client: %s: %w", safetext.Quote(name, 200), err)
}
