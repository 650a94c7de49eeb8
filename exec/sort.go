package exec

import (
	"slices"

	"github.com/kvschema/kvschema/types"
)

// SortRows orders rows as a query's client sort (CLIENT SORT BY) does:
// stably, by the values at the positions order lists, each descending where
// desc says so, compared by types.CompareDatums (NULL first). Package
// calibrate times it to price a client sort per row (cost.Profile's
// SortRowCost).
func SortRows[T ~[]types.Datum](rows []T, order []int, desc []bool) {
	slices.SortStableFunc(rows, func(a, b T) int {
		for k, s := range order {
			c := types.CompareDatums(a[s], b[s])
			if desc[k] {
				c = -c
			}
			if c != 0 {
				return c
			}
		}
		return 0
	})
}
