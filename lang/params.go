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
		see(s.TTL)
	case *Connect:
		see(s.Key)
		see(s.To.Value)
	case *Select:
		for _, j := range s.Joins {
			see(j.On)
		}
		see(s.Where)
		see(s.Having)
		see(s.Limit)
	case *Update:
		see(s.TTL)
		for _, a := range s.Set {
			see(a.Key)
			see(a.Value)
		}
		see(s.Where)
		if s.If != nil {
			see(s.If.Expr)
		}
	case *Delete:
		for _, a := range s.Columns {
			see(a.Key)
		}
		see(s.Where)
		if s.If != nil {
			see(s.If.Expr)
		}
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
	case *Contains:
		walkParams(x.X, fn)
		walkParams(x.Elem, fn)
	}
}

// Parameterize turns, in place, every constant value of st into a
// parameter, as a query log's statements are normalized: the values a
// WHERE or JOIN … ON condition compares, an INSERT inserts, an UPDATE sets
// and a CONNECT names (a LIMIT stays as written: the advisor costs it).
// Every parameter, the statement's own included (a LIMIT's too), becomes a
// `?`, numbered in source order (pg_stat_statements writes $n, a MySQL
// digest ?).
func Parameterize(st Statement) {
	n := 0
	p := func(e *Expr) { *e = parameterize(*e, &n) }
	switch s := st.(type) {
	case *Insert:
		for _, row := range s.Rows {
			for i := range row {
				p(&row[i])
			}
		}
		for i := range s.Connect {
			p(&s.Connect[i].Value)
		}
		if _, ok := s.TTL.(*Param); ok {
			p(&s.TTL) // a TTL stays as written, as a LIMIT does
		}
	case *Connect:
		p(&s.Key)
		p(&s.To.Value)
	case *Select:
		for i := range s.Joins {
			p(&s.Joins[i].On)
		}
		p(&s.Where)
		p(&s.Having)
		if _, ok := s.Limit.(*Param); ok {
			p(&s.Limit)
		}
	case *Update:
		if _, ok := s.TTL.(*Param); ok {
			p(&s.TTL)
		}
		for i := range s.Set {
			if s.Set[i].Key != nil {
				p(&s.Set[i].Key)
			}
			p(&s.Set[i].Value)
		}
		p(&s.Where)
		if s.If != nil && s.If.Expr != nil {
			p(&s.If.Expr)
		}
	case *Delete:
		for i := range s.Columns {
			if s.Columns[i].Key != nil {
				p(&s.Columns[i].Key)
			}
		}
		p(&s.Where)
		if s.If != nil && s.If.Expr != nil {
			p(&s.If.Expr)
		}
	case *Explain:
		Parameterize(s.Stmt)
	}
}

// parameterize returns e with its constants and parameters replaced by
// `?` parameters numbered from *n on, in the order Print writes them.
func parameterize(e Expr, n *int) Expr {
	switch x := e.(type) {
	case *Literal:
		*n++
		return &Param{At: x.At, Index: *n - 1}
	case *Param:
		*n++
		return &Param{At: x.At, Index: *n - 1}
	case *Binary:
		x.L = parameterize(x.L, n)
		x.R = parameterize(x.R, n)
	case *Not:
		x.X = parameterize(x.X, n)
	case *In:
		x.X = parameterize(x.X, n)
		for i := range x.List {
			x.List[i] = parameterize(x.List[i], n)
		}
	case *Between:
		x.X = parameterize(x.X, n)
		x.Lo = parameterize(x.Lo, n)
		x.Hi = parameterize(x.Hi, n)
	case *IsNull:
		x.X = parameterize(x.X, n)
	case *Contains:
		x.X = parameterize(x.X, n)
		x.Elem = parameterize(x.Elem, n)
	}
	return e
}
