package main

// mockEnv names the variable that gives a running mock's address
// (http://HOST:PORT) to the commands that reach one: check --mock, and
// call's and login's --via. A flag given beats it.
const mockEnv = "XBLCALL_MOCK"

// adminTokenEnv names the variable that gives the mock's admin token to
// mock and check when --admin-token is not given: a token on the command
// line is seen by every user of the machine (ps, /proc/PID/cmdline).
const adminTokenEnv = "XBLCALL_ADMIN_TOKEN"

// mockAddr returns the running mock's address a command takes and the name
// its errors cite: the flag's value when given, else $XBLCALL_MOCK, else
// def.
func mockAddr(e *env, flagName, flagValue, def string) (addr, from string) {
	if flagValue != "" {
		return flagValue, flagName
	}
	if v := e.getenv(mockEnv); v != "" {
		return v, mockEnv
	}
	return def, flagName
}
