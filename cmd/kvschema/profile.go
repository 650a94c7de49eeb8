package main

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
)

// startProfiles writes the profiles the environment asks for, for people
// working on kvschema: KVSCHEMA_CPUPROFILE=FILE a CPU profile of the whole
// command, KVSCHEMA_BLOCKPROFILE=FILE and KVSCHEMA_MUTEXPROFILE=FILE where
// goroutines waited (go tool pprof reads them). stop writes them.
func startProfiles() (stop func(), err error) {
	var stops []func() error
	if f := os.Getenv("KVSCHEMA_CPUPROFILE"); f != "" {
		out, err := os.Create(f)
		if err != nil {
			return nil, err
		}
		if err := pprof.StartCPUProfile(out); err != nil {
			out.Close()
			return nil, err
		}
		stops = append(stops, func() error { pprof.StopCPUProfile(); return out.Close() })
	}
	for _, p := range []struct{ env, name string }{{"KVSCHEMA_BLOCKPROFILE", "block"}, {"KVSCHEMA_MUTEXPROFILE", "mutex"}} {
		f := os.Getenv(p.env)
		if f == "" {
			continue
		}
		if p.name == "block" {
			runtime.SetBlockProfileRate(int(1e5)) // a sample per 100 µs blocked
		} else {
			runtime.SetMutexProfileFraction(10)
		}
		name := p.name
		stops = append(stops, func() error {
			out, err := os.Create(f)
			if err != nil {
				return err
			}
			if err := pprof.Lookup(name).WriteTo(out, 0); err != nil {
				out.Close()
				return err
			}
			return out.Close()
		})
	}
	return func() {
		for _, s := range stops {
			if err := s(); err != nil {
				fmt.Fprintln(os.Stderr, "kvschema: writing a profile:", err)
			}
		}
	}, nil
}
