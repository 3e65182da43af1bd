package report_test

import (
	"os"

	"pkg/db"
	"pkg/repo"
	"pkg/report"
)

func ExampleNewWhy() {
	installed := []repo.Package{
		{Name: "app", Version: "1.0", Depends: []repo.Requirement{{Name: "lib", Constraints: []repo.Constraint{{Op: ">=", Version: "1"}}}}},
		{Name: "lib", Version: "1.0"},
	}
	neededBy, chains := repo.Why(installed, []string{"app"}, "lib")
	report.Write(os.Stdout, report.NewWhy(&db.Record{Name: "lib", Version: "1.0"}, "", neededBy, chains))
	// Output:
	// {
	//   "schema": "pkg.why/1",
	//   "name": "lib",
	//   "version": "1.0",
	//   "needed_by": [
	//     "app"
	//   ],
	//   "chains": [
	//     [
	//       "app",
	//       "lib"
	//     ]
	//   ]
	// }
}
