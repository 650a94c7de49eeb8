package lang

// CountParams is the number of arguments a statement takes: one per `?`,
// the highest n of its `$n`, or one per distinct `:name`.
func CountParams(st Statement) int {
	n := 0
	eachParam(st, func(p *Param) { n = max(n, p.Index+1) })
	return n
}

// ParamNames returns the names of st's :name parameters by index, or nil
// when it has none (its parameters are ? or $n).
func ParamNames(st Statement) []string {
	var names []string
	eachParam(st, func(p *Param) {
		if p.Name == "" {
			return
		}
		for len(names) <= p.Index {
			names = append(names, "")
		}
		names[p.Index] = p.Name
	})
	return names
}

// eachParam calls fn for every parameter of st.
func eachParam(st Statement, fn func(*Param)) {
	see := func(e Expr) { walkParams(e, fn) }
	switch s := st.(type) {
	case *Insert:
		for _, row := range s.Rows {
			for _, e := range row {
				see(e)
			}
		}
		for _, c := range s.Connect {
			see(c.Value)
		}
	case *Connect:
		see(s.Key)
		see(s.To.Value)
	case *Select:
		for _, j := range s.Joins {
			see(j.On)
		}
		see(s.Where)
		see(s.Limit)
	case *Update:
		for _, a := range s.Set {
			see(a.Value)
		}
		see(s.Where)
	case *Delete:
		see(s.Where)
	case *Explain:
		eachParam(s.Stmt, fn)
	}
}

func walkParams(e Expr, fn func(*Param)) {
	switch x := e.(type) {
	case *Param:
		fn(x)
	case *Binary:
		walkParams(x.L, fn)
		walkParams(x.R, fn)
	case *Not:
		walkParams(x.X, fn)
	case *In:
		walkParams(x.X, fn)
		for _, item := range x.List {
			walkParams(item, fn)
		}
	case *Between:
		walkParams(x.X, fn)
		walkParams(x.Lo, fn)
		walkParams(x.Hi, fn)
	case *IsNull:
		walkParams(x.X, fn)
	}
}
