package rubis

import (
	"fmt"

	"github.com/kvschema/kvschema/catalog"
	"github.com/kvschema/kvschema/examples"
	"github.com/kvschema/kvschema/lang"
	"github.com/kvschema/kvschema/workload"
)

// Parse parses the RUBiS model (shipped in package examples) and one of
// its workloads, "workload.kvs" or
// "workload_secondary.kvs"; it also returns the model's statements (which
// advise --format ddl repeats).
func Parse(workloadFile string) (*catalog.Model, []lang.Statement, *workload.Workload, error) {
	src, err := WorkloadSource(workloadFile)
	if err != nil {
		return nil, nil, nil, err
	}
	stmts, err := lang.ParseScript("examples/rubis/model.kvs", []byte(examples.RUBiSModel))
	if err != nil {
		return nil, nil, nil, err
	}
	m, err := catalog.Build(stmts)
	if err != nil {
		return nil, nil, nil, err
	}
	w, err := workload.Parse(m, "examples/rubis/"+workloadFile, []byte(src))
	if err != nil {
		return nil, nil, nil, err
	}
	return m, stmts, w, nil
}

// WorkloadSource returns the text of a shipped RUBiS workload:
// "workload.kvs" (36 statements) or "workload_secondary.kvs" (the paper's
// 61).
func WorkloadSource(workloadFile string) (string, error) {
	src := map[string]string{"workload.kvs": examples.RUBiSWorkload, "workload_secondary.kvs": examples.RUBiSWorkloadSecondary}[workloadFile]
	if src == "" {
		return "", fmt.Errorf("no RUBiS workload %q (workload.kvs, workload_secondary.kvs)", workloadFile)
	}
	return src, nil
}
