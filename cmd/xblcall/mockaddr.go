package main

// mockEnv names the variable that gives a running mock's address
// (http://HOST:PORT) to the commands that reach one: check --mock, and
// call's and login's --via. A flag given beats it.
const mockEnv = "XBLCALL_MOCK"

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
