//go:build unix

package client

// An outside attack (attack9c116) on the partner certificate reader after
// bfe66c5 moved it to internal/smallfile.

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/xblgo/fgrl/mock/tlsca"
)

// held: LoadPartnerCertificate "a key file that its group or others may
// read or write is refused (ErrKeyReadable)"; readSmall "the mode of the
// file opened, not of a name that may change". A key reached through a
// link (the link's own mode 0777) is judged by the file it names: 0600 and
// 0400 taken, 0640, 0620 (group write), 0602 and 0644 refused; a key that
// is a FIFO with a writer is refused at once; a certificate past 64 KiB
// is refused, not read on.
func TestAttack9cHeldPartnerKeyModeThroughLinks(t *testing.T) {
	ca, err := tlsca.New()
	if err != nil {
		t.Fatal(err)
	}
	certPEM, keyPEM, err := ca.IssuePartner(tlsca.Partner{Name: "game-backend"})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile, keyLink := filepath.Join(dir, "partner.pem"), filepath.Join(dir, "partner.key"), filepath.Join(dir, "key.link")
	os.WriteFile(certFile, certPEM, 0o644)
	os.Symlink(keyFile, keyLink)
	for _, tc := range []struct {
		mode os.FileMode
		want error
	}{{0o600, nil}, {0o400, nil}, {0o640, ErrKeyReadable}, {0o620, ErrKeyReadable}, {0o602, ErrKeyReadable}, {0o644, ErrKeyReadable}} {
		os.Remove(keyFile)
		os.WriteFile(keyFile, keyPEM, 0o600)
		os.Chmod(keyFile, tc.mode)
		if _, err := LoadPartnerCertificate(certFile, keyLink); !errors.Is(err, tc.want) {
			t.Errorf("key file %v through a link: %v, want %v", tc.mode, err, tc.want)
		}
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err == nil {
		rd, _ := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0)
		w, _ := os.OpenFile(fifo, os.O_WRONLY, 0)
		w.Write(keyPEM)
		done := make(chan error, 1)
		go func() { _, err := LoadPartnerCertificate(certFile, fifo); done <- err }()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), "not a regular file") {
				t.Errorf("a key that is a FIFO with a writer: %v", err)
			}
		case <-time.After(5 * time.Second):
			t.Errorf("LoadPartnerCertificate waited on a FIFO with a writer")
		}
		w.Close()
		rd.Close()
	}
	big := filepath.Join(dir, "big.pem")
	os.WriteFile(big, append(append([]byte{}, certPEM...), make([]byte, 65<<10)...), 0o644)
	os.Chmod(keyFile, 0o600)
	if _, err := LoadPartnerCertificate(big, keyFile); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("a certificate file of 65 KiB and more: %v", err)
	}
}
