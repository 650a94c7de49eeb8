package lang

// CountParams is the number of `?` parameters of a statement.
func CountParams(st Statement) int {
	n := 0
	see := func(e Expr) { walkParams(e, &n) }
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
		return CountParams(s.Stmt)
	}
	return n
}

func walkParams(e Expr, n *int) {
	switch x := e.(type) {
	case *Param:
		*n = max(*n, x.Index+1)
	case *Binary:
		walkParams(x.L, n)
		walkParams(x.R, n)
	case *Not:
		walkParams(x.X, n)
	case *In:
		walkParams(x.X, n)
		for _, item := range x.List {
			walkParams(item, n)
		}
	case *Between:
		walkParams(x.X, n)
		walkParams(x.Lo, n)
		walkParams(x.Hi, n)
	case *IsNull:
		walkParams(x.X, n)
	}
}
