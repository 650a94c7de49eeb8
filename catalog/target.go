package catalog

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/kvschema/kvschema/cost"
)

// Directives are comments in an advised schema's DDL (kvschema advise
// --format ddl writes them) recording what it was advised for: the target,
// the kind of engine whose costs chose it (cost.Profile.Engine: pebble,
// bigtable or cassandra), and the cost profile itself as JSON. A directive
// is a whole line beginning with its prefix; the language reads it as a
// comment, so the file stays a plain script.
const (
	TargetDirective  = "-- kvschema target: "
	ProfileDirective = "-- kvschema profile: "
)

// Directives returns the DDL lines recording that a schema was advised
// with profile p: its target (when p names its engine) and p.
func Directives(p cost.Profile) (string, error) {
	pj, err := json.Marshal(p)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	if p.Engine != "" {
		b.WriteString(TargetDirective + p.Engine + "\n")
	}
	b.WriteString(ProfileDirective + string(pj) + "\n")
	return b.String(), nil
}

// AdvisedFor reads the directives of a schema script: the target it was
// advised for ("" when it records none, as in schemas written by hand or
// by earlier versions of kvschema) and the profile (nil when none). A
// profile directive without a target directive gives the profile's
// engine as the target.
func AdvisedFor(file string, src []byte) (target string, prof *cost.Profile, err error) {
	sc := bufio.NewScanner(bytes.NewReader(src))
	sc.Buffer(nil, len(src)+1)
	line := 0
	for sc.Scan() {
		line++
		text := sc.Text()
		if t, ok := strings.CutPrefix(text, strings.TrimSpace(TargetDirective)); ok {
			if target != "" {
				return "", nil, fmt.Errorf("%s:%d: a second target directive", file, line)
			}
			if target = strings.TrimSpace(t); target == "" {
				return "", nil, fmt.Errorf("%s:%d: the target directive names no target", file, line)
			}
		} else if pj, ok := strings.CutPrefix(text, strings.TrimSpace(ProfileDirective)); ok {
			if prof != nil {
				return "", nil, fmt.Errorf("%s:%d: a second profile directive", file, line)
			}
			var p cost.Profile
			dec := json.NewDecoder(strings.NewReader(pj))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&p); err != nil {
				return "", nil, fmt.Errorf("%s:%d: profile directive: %v", file, line, err)
			}
			if err := p.Validate(); err != nil {
				return "", nil, fmt.Errorf("%s:%d: %v", file, line, err)
			}
			prof = &p
		}
	}
	if err := sc.Err(); err != nil {
		return "", nil, err
	}
	if target == "" && prof != nil {
		target = prof.Engine
	}
	return target, prof, nil
}

// TargetNote says what is amiss when a schema advised for target is
// deployed on a store whose engine is engine (store.Capabilities.Engine),
// or returns "" when nothing is: the two match, either is unknown, or the
// store is "mem" (a throwaway store for tests and demos, which runs
// kvschema's engine in memory: no target is wrong for it).
func TargetNote(target, engine string) string {
	if target == "" || engine == "" || engine == "mem" || target == engine {
		return ""
	}
	why := "its plans were costed with another engine's constants"
	if target == cost.EngineCassandra {
		why = "Cassandra's constants (for a schema exported to Cassandra) price a secondary-index read as one request, which it is not here"
	}
	return fmt.Sprintf("the schema was advised for target %s, but the store is %s: %s; kvschema advise --target %s designs for this store", target, engine, why, engine)
}
