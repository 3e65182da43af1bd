// Command measure reports structural figures of the pkg module in a checkout: its packages,
// exported names, longest module-internal import chain, and, given a coverage profile of one
// command, the files and packages that command ran and the calls it made from a lower layer
// to a higher one (through func values and interfaces: imports only go down).
//
//	measure -dir CHECKOUT [-layers FILE] [-cover PROFILE] [-entry PKG.FUNC,...]
//
// -layers names a file in design.md's "### Layers" form ("N. title: `pkg`, `dir/*`");
// without it the checkout's docs/design.md is read. -cover is `go tool covdata textfmt`
// output. -entry names the functions whose static call graph (VTA) bounds "the change's
// flow"; each is reported separately.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/tools/go/callgraph"
	"golang.org/x/tools/go/callgraph/cha"
	"golang.org/x/tools/go/callgraph/vta"
	"golang.org/x/tools/go/packages"
	"golang.org/x/tools/go/ssa"
	"golang.org/x/tools/go/ssa/ssautil"
)

var (
	dirFlag    = flag.String("dir", ".", "the checkout (module root)")
	layersFlag = flag.String("layers", "", "layers file (default: DIR/docs/design.md)")
	coverFlag  = flag.String("cover", "", "textfmt coverage profile of one command")
	entryFlag  = flag.String("entry", "", "comma-separated PKGPATH.FUNC entry points of the change's flow")
)

func main() {
	flag.Parse()
	dir, err := filepath.Abs(*dirFlag)
	check(err)
	lay := loadLayers(dir)

	cfg := &packages.Config{Dir: dir, Mode: packages.NeedName | packages.NeedFiles | packages.NeedImports | packages.NeedModule}
	all, err := packages.Load(cfg, "./...")
	check(err)
	modPath := ""
	for _, p := range all {
		if p.Module != nil {
			modPath = p.Module.Path
			break
		}
	}
	rel := func(ip string) string {
		if ip == modPath {
			return "."
		}
		return strings.TrimPrefix(ip, modPath+"/")
	}
	sort.Slice(all, func(i, j int) bool { return all[i].PkgPath < all[j].PkgPath })

	// 1. Packages and exported names.
	fmt.Printf("# measure %s (module %s)\n\n", dir, modPath)
	fmt.Println("## 1. packages (non-test, with Go files, for linux/amd64)")
	var nAll, nLib, nNoTools, nProduct int
	for _, p := range all {
		if len(p.GoFiles) == 0 {
			continue
		}
		nAll++
		if p.Name != "main" {
			nLib++
		}
		r := rel(p.PkgPath)
		if !strings.HasPrefix(r, "bench/") {
			nNoTools++
		}
		if lay.of(r) != 1 {
			nProduct++
		}
	}
	fmt.Printf("all packages: %d\n", nAll)
	fmt.Printf("without bench/*: %d\n", nNoTools)
	fmt.Printf("without layer 1 (bench/*, test/crash, test helpers): %d\n", nProduct)
	fmt.Printf("libraries (package name not main; bench/* and cmd/pkg are main): %d\n\n", nLib)

	fmt.Println("exported names per library package (exported funcs, methods with an exported name on exported types, types, vars, consts; non-test files):")
	type typeCount struct {
		name string
		n    int
	}
	var total, totalLoose, totalNoLayer1, totalAnyTags int
	var types []typeCount
	var rows []string
	for _, p := range all {
		if p.Name == "main" || len(p.GoFiles) == 0 {
			continue
		}
		c := countExported(p.GoFiles)
		anyTags := p.GoFiles
		for _, f := range p.IgnoredFiles {
			if strings.HasSuffix(f, ".go") && !strings.HasSuffix(f, "_test.go") {
				anyTags = append(anyTags[:len(anyTags):len(anyTags)], f)
			}
		}
		totalAnyTags += countExported(anyTags).names
		r := rel(p.PkgPath)
		total += c.names
		totalLoose += c.names + c.unexpRecvMethods
		if lay.of(r) != 1 {
			totalNoLayer1 += c.names
		}
		rows = append(rows, fmt.Sprintf("  %-28s %4d  (funcs %d, methods %d, types %d, vars %d, consts %d; +%d exported methods of unexported types)",
			r, c.names, c.funcs, c.methods, c.types, c.vars, c.consts, c.unexpRecvMethods))
		for t, n := range c.perType {
			types = append(types, typeCount{r + "." + t, n})
		}
	}
	for _, r := range rows {
		fmt.Println(r)
	}
	fmt.Printf("exported names, total: %d\n  without layer 1: %d\n  with the files other platforms build too: %d\n  counting exported methods of unexported types too: %d\n", total, totalNoLayer1, totalAnyTags, totalLoose)
	sort.Slice(types, func(i, j int) bool {
		if types[i].n != types[j].n {
			return types[i].n > types[j].n
		}
		return types[i].name < types[j].name
	})
	fmt.Print("types with the most exported methods (declared on T or *T):")
	for _, t := range types[:min(5, len(types))] {
		fmt.Printf(" %s %d;", t.name, t.n)
	}
	fmt.Println()
	over := 0
	for _, t := range types {
		if t.n > 25 {
			over++
		}
	}
	fmt.Printf("types with more than 25 exported methods: %d\n\n", over)

	// 2. Import depth.
	fmt.Println("## 2. import depth (longest chain of module-internal imports from cmd/pkg; depth = edges)")
	byPath := map[string]*packages.Package{}
	for _, p := range all {
		byPath[p.PkgPath] = p
	}
	memo := map[string][]string{}
	var longest func(ip string) []string
	longest = func(ip string) []string {
		if c, ok := memo[ip]; ok {
			return c
		}
		best := []string{}
		p := byPath[ip]
		var imps []string
		for q := range p.Imports {
			imps = append(imps, q)
		}
		sort.Strings(imps)
		for _, q := range imps {
			if _, ok := byPath[q]; !ok {
				continue
			}
			if c := longest(q); len(c) > len(best) {
				best = c
			}
		}
		res := append([]string{ip}, best...)
		memo[ip] = res
		return res
	}
	chain := longest(modPath + "/cmd/pkg")
	var names []string
	for _, c := range chain {
		names = append(names, rel(c))
	}
	fmt.Printf("import depth: %d packages in the chain (%d imports): %s\n\n", len(chain), len(chain)-1, strings.Join(names, " -> "))

	if *coverFlag == "" {
		return
	}
	coverage(dir, modPath, rel, lay)
}

// exported holds one package's counts of exported names.
type exported struct {
	names, funcs, methods, types, vars, consts, unexpRecvMethods int
	perType                                                      map[string]int
}

// countExported counts the exported names the files declare.
func countExported(files []string) exported {
	c := exported{perType: map[string]int{}}
	fset := token.NewFileSet()
	for _, name := range files {
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		check(err)
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if !d.Name.IsExported() {
					continue
				}
				if d.Recv == nil {
					c.funcs++
					continue
				}
				t := recvName(d.Recv.List[0].Type)
				if !ast.IsExported(t) {
					c.unexpRecvMethods++
					continue
				}
				c.methods++
				c.perType[t]++
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						if s.Name.IsExported() {
							c.types++
						}
					case *ast.ValueSpec:
						for _, id := range s.Names {
							if !id.IsExported() {
								continue
							}
							if d.Tok == token.CONST {
								c.consts++
							} else {
								c.vars++
							}
						}
					}
				}
			}
		}
	}
	c.names = c.funcs + c.methods + c.types + c.vars + c.consts
	return c
}

// recvName is the name of a receiver's base type.
func recvName(t ast.Expr) string {
	for {
		switch x := t.(type) {
		case *ast.StarExpr:
			t = x.X
		case *ast.IndexExpr:
			t = x.X
		case *ast.IndexListExpr:
			t = x.X
		case *ast.ParenExpr:
			t = x.X
		case *ast.Ident:
			return x.Name
		default:
			return ""
		}
	}
}

// layers maps a module-relative package path to its layer (1 highest).
type layers struct {
	exact  map[string]int
	prefix map[string]int
	titles map[int]string
}

var layerLine = regexp.MustCompile("^([0-9]+)\\. ([^:]*): (.*)$")
var ticked = regexp.MustCompile("`([^`]+)`")

// loadLayers reads the layers list of -layers, else of DIR/docs/design.md.
func loadLayers(dir string) layers {
	path := *layersFlag
	if path == "" {
		path = filepath.Join(dir, "docs", "design.md")
	}
	f, err := os.Open(path)
	check(err)
	defer f.Close()
	l := layers{exact: map[string]int{}, prefix: map[string]int{}, titles: map[int]string{}}
	in := *layersFlag != ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "### ") {
			in = line == "### Layers" || *layersFlag != ""
			continue
		}
		if !in {
			continue
		}
		m := layerLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		n, _ := strconv.Atoi(m[1])
		l.titles[n] = m[2]
		for _, t := range ticked.FindAllStringSubmatch(m[3], -1) {
			if p, ok := strings.CutSuffix(t[1], "/*"); ok {
				l.prefix[p] = n
			} else {
				l.exact[t[1]] = n
			}
		}
	}
	check(sc.Err())
	if len(l.titles) == 0 {
		fail("no layers list in %s", path)
	}
	return l
}

// of is the layer of the package at module-relative path r: an exact entry, else the longest
// DIR/* that holds it; 0 when none does.
func (l layers) of(r string) int {
	if n, ok := l.exact[r]; ok {
		return n
	}
	best, n := "", 0
	for p, k := range l.prefix {
		if strings.HasPrefix(r, p+"/") && len(p) > len(best) {
			best, n = p, k
		}
	}
	return n
}

// block is one coverage block of a profile.
type block struct {
	file                 string // module-relative
	sl, sc, el, ec, stmt int
	count                int
}

// readProfile reads a textfmt profile; blocks of files outside the module are dropped.
func readProfile(path, modPath string) []block {
	f, err := os.Open(path)
	check(err)
	defer f.Close()
	re := regexp.MustCompile(`^(.+):([0-9]+)\.([0-9]+),([0-9]+)\.([0-9]+) ([0-9]+) ([0-9]+)$`)
	merged := map[string]*block{}
	var order []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		m := re.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		file, ok := strings.CutPrefix(m[1], modPath+"/")
		if !ok {
			continue
		}
		key := file + ":" + strings.Join(m[2:6], ",")
		n := make([]int, 7)
		for i := 2; i <= 7; i++ {
			n[i-1], _ = strconv.Atoi(m[i])
		}
		b := merged[key]
		if b == nil {
			b = &block{file: file, sl: n[1], sc: n[2], el: n[3], ec: n[4], stmt: n[5]}
			merged[key] = b
			order = append(order, key)
		}
		b.count += n[6]
	}
	check(sc.Err())
	var out []block
	for _, k := range order {
		out = append(out, *merged[k])
	}
	return out
}

// span is the source range of one function (named, method or literal).
type span struct {
	fn             *ssa.Function
	sl, sc, el, ec int
}

func (s span) holds(l, c int) bool {
	return (l > s.sl || l == s.sl && c >= s.sc) && (l < s.el || l == s.el && c <= s.ec)
}

func (s span) size() int { return (s.el-s.sl)*10000 + s.ec - s.sc }

func coverage(dir, modPath string, rel func(string) string, lay layers) {
	blocks := readProfile(*coverFlag, modPath)
	fmt.Println("## 3. what one command ran (coverage profile", *coverFlag+")")
	covFiles := map[string]bool{}
	covPkgs := map[string]bool{}
	allFiles := map[string]bool{}
	for _, b := range blocks {
		allFiles[b.file] = true
		if b.count > 0 && b.stmt > 0 {
			covFiles[b.file] = true
			covPkgs[filepath.Dir(b.file)] = true
		}
	}
	fmt.Printf("whole process: %d files and %d packages with a covered statement (of %d files instrumented)\n", len(covFiles), len(covPkgs), len(allFiles))
	fmt.Printf("  packages: %s\n", strings.Join(sortedKeys(covPkgs), " "))
	fmt.Printf("  by layer: %s\n", byLayer(covFiles, lay))

	// The program, its SSA form and call graph.
	cfg := &packages.Config{Dir: dir, Mode: packages.LoadAllSyntax}
	pkgs, err := packages.Load(cfg, "./cmd/pkg")
	check(err)
	if packages.PrintErrors(pkgs) > 0 {
		fail("the program does not load")
	}
	prog, _ := ssautil.AllPackages(pkgs, ssa.InstantiateGenerics)
	prog.Build()
	fns := ssautil.AllFunctions(prog)
	cg := vta.CallGraph(fns, cha.CallGraph(prog))
	cg.DeleteSyntheticNodes()

	// Each covered block belongs to the innermost function whose source holds it.
	inModule := func(fn *ssa.Function) bool {
		return fn.Pkg != nil && (fn.Pkg.Pkg.Path() == modPath || strings.HasPrefix(fn.Pkg.Pkg.Path(), modPath+"/"))
	}
	fileOf := map[*ssa.Function]string{}
	spans := map[string][]span{}
	for fn := range fns {
		if fn.Origin() != nil || !inModule(fn) || fn.Syntax() == nil {
			continue
		}
		s, e := prog.Fset.Position(fn.Syntax().Pos()), prog.Fset.Position(fn.Syntax().End())
		r, err := filepath.Rel(dir, s.Filename)
		if err != nil || strings.HasPrefix(r, "..") {
			continue
		}
		fileOf[fn] = r
		spans[r] = append(spans[r], span{fn, s.Line, s.Column, e.Line, e.Column})
	}
	covered := map[*ssa.Function]bool{}
	coveredBlocks := map[string][]block{}
	for _, b := range blocks {
		if b.count == 0 || b.stmt == 0 {
			continue
		}
		coveredBlocks[b.file] = append(coveredBlocks[b.file], b)
		var in *span
		for i, s := range spans[b.file] {
			if s.holds(b.sl, b.sc) && (in == nil || s.size() < in.size()) {
				in = &spans[b.file][i]
			}
		}
		if in != nil {
			covered[in.fn] = true
		}
	}
	origin := func(fn *ssa.Function) *ssa.Function {
		if o := fn.Origin(); o != nil {
			return o
		}
		return fn
	}
	isCovered := func(fn *ssa.Function) bool { return covered[origin(fn)] }
	siteCount := func(p token.Pos) int {
		if !p.IsValid() {
			return -1
		}
		ps := prog.Fset.Position(p)
		r, err := filepath.Rel(dir, ps.Filename)
		if err != nil {
			return 0
		}
		for _, b := range coveredBlocks[r] {
			if (span{sl: b.sl, sc: b.sc, el: b.el, ec: b.ec}).holds(ps.Line, ps.Column) {
				return b.count
			}
		}
		return 0
	}
	siteRan := func(p token.Pos) bool { return siteCount(p) != 0 }
	fmt.Printf("covered functions (named, methods and literals): %d\n\n", len(covered))

	// The change's flow: covered module functions reachable from each entry in the call graph
	// (through functions outside the module, which the profile does not cover, too).
	for _, e := range strings.Split(*entryFlag, ",") {
		if e == "" {
			continue
		}
		i := strings.LastIndex(e, ".")
		var entry *ssa.Function
		for fn := range fileOf {
			if fn.Pkg.Pkg.Path() == e[:i] && fn.Name() == e[i+1:] && fn.Parent() == nil {
				entry = fn
			}
		}
		if entry == nil {
			fmt.Printf("entry %s: not found\n\n", e)
			continue
		}
		seen := reach(cg, entry, true, inModule, isCovered, siteRan)
		direct := reach(cg, entry, false, inModule, isCovered, siteRan)
		files, pk := map[string]bool{}, map[string]bool{}
		nfn := 0
		for fn := range seen {
			fn = origin(fn)
			if f, ok := fileOf[fn]; ok && isCovered(fn) {
				files[f] = true
				pk[filepath.Dir(f)] = true
				nfn++
			}
		}
		fmt.Printf("flow from %s (%s): %d covered functions in %d files and %d packages\n", rel(e[:i])+"."+e[i+1:], fileOf[entry], nfn, len(files), len(pk))
		fmt.Printf("  packages: %s\n", strings.Join(sortedKeys(pk), " "))
		fmt.Printf("  by layer: %s\n", byLayer(files, lay))
		fmt.Printf("  files: %s\n", strings.Join(sortedKeys(files), " "))
		df, dp := map[string]bool{}, map[string]bool{}
		for fn := range direct {
			if f, ok := fileOf[origin(fn)]; ok {
				df[f] = true
				dp[filepath.Dir(f)] = true
			}
		}
		fmt.Printf("  (not passing through functions outside the module, such as sync.Once.Do or sort.Slice: %d files, %d packages)\n", len(df), len(dp))
		climbs(cg, seen, fileOf, isCovered, siteCount, rel, lay, inModule, prog, dir, "within this flow")
	}
	all := map[*ssa.Function]bool{}
	for fn := range fileOf {
		if isCovered(fn) {
			all[fn] = true
		}
	}
	climbs(cg, all, fileOf, isCovered, siteCount, rel, lay, inModule, prog, dir, "whole process")
}

// reach is the set of functions reachable from entry in cg along call sites that ran, into
// module functions that ran, and (if external) through functions outside the module.
func reach(cg *callgraph.Graph, entry *ssa.Function, external bool, inModule, isCovered func(*ssa.Function) bool, siteRan func(token.Pos) bool) map[*ssa.Function]bool {
	seen := map[*ssa.Function]bool{entry: true}
	parent := map[*ssa.Function]*ssa.Function{}
	stack := []*ssa.Function{entry}
	for len(stack) > 0 {
		fn := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		n := cg.Nodes[fn]
		if n == nil {
			continue
		}
		for _, out := range n.Out {
			g := out.Callee.Func
			if seen[g] || !external && !inModule(g) {
				continue
			}
			if inModule(g) && (!isCovered(g) || inModule(fn) && !siteRan(out.Pos())) {
				continue
			}
			seen[g] = true
			parent[g] = fn
			stack = append(stack, g)
		}
	}
	if why := os.Getenv("MEASURE_WHY"); why != "" && external {
		for fn := range seen {
			if fn.Syntax() == nil || !strings.Contains(fn.Prog.Fset.Position(fn.Pos()).Filename, why) {
				continue
			}
			var chain []string
			for f := fn; f != nil; f = parent[f] {
				chain = append(chain, f.String())
			}
			fmt.Fprintln(os.Stderr, "why", why+":", strings.Join(chain, " <- "))
		}
	}
	return seen
}

// kind says how a call site reaches its callee: through a func value, or an interface.
func kind(site ssa.CallInstruction, rel func(string) string) string {
	if site == nil {
		return "synthetic"
	}
	c := site.Common()
	if c.IsInvoke() {
		t := c.Value.Type().String()
		if n, ok := c.Value.Type().(interface{ Obj() *types.TypeName }); ok && n.Obj().Pkg() != nil {
			t = rel(n.Obj().Pkg().Path()) + "." + n.Obj().Name()
		}
		return "interface " + t + "." + c.Method.Name()
	}
	if c.StaticCallee() != nil {
		return "static"
	}
	return "func value"
}

// climbs prints the call edges between covered module functions of within, at call sites
// that ran, whose callee's package is in a higher layer than the caller's.
func climbs(cg *callgraph.Graph, within map[*ssa.Function]bool, fileOf map[*ssa.Function]string,
	isCovered func(*ssa.Function) bool, siteCount func(token.Pos) int, rel func(string) string,
	lay layers, inModule func(*ssa.Function) bool, prog *ssa.Program, dir, what string) {
	var lines []string
	sites := map[string]bool{}
	pairs := map[string]bool{}
	kinds := map[string]int{}
	times := 0
	for fn := range within {
		if !inModule(fn) {
			continue
		}
		n := cg.Nodes[fn]
		if n == nil {
			continue
		}
		lf := lay.of(rel(fn.Pkg.Pkg.Path()))
		for _, out := range n.Out {
			g := out.Callee.Func
			ran := siteCount(out.Pos())
			if !inModule(g) || !isCovered(g) || ran == 0 {
				continue
			}
			lg := lay.of(rel(g.Pkg.Pkg.Path()))
			if lg == 0 || lf == 0 || lg >= lf {
				continue
			}
			ps := prog.Fset.Position(out.Pos())
			r, _ := filepath.Rel(dir, ps.Filename)
			site := fmt.Sprintf("%s:%d", r, ps.Line)
			if !sites[site] && ran > 0 {
				times += ran
			}
			sites[site] = true
			pair := fn.String() + " -> " + g.String()
			pairs[pair] = true
			k := kind(out.Site, rel)
			switch {
			case k == "func value":
				kinds["func"]++
			case strings.HasPrefix(k, "interface ") && lay.of(strings.TrimPrefix(strings.SplitN(k, ".", 2)[0], "interface ")) != 0:
				kinds["module"]++
			default:
				kinds["std"]++
			}
			n := "?"
			if ran > 0 {
				n = strconv.Itoa(ran)
			}
			lines = append(lines, fmt.Sprintf("  [%d->%d] %s -> %s  (%s; %s; site's block ran %s times)", lf, lg, short(fn, rel), short(g, rel), site, k, n))
		}
	}
	sort.Strings(lines)
	fmt.Printf("climbs, %s: %d call edges (caller -> callee) from a lower layer to a higher one, at %d call sites, %d caller/callee pairs\n", what, len(lines), len(sites), len(pairs))
	fmt.Printf("  their call sites' blocks ran %d times in all (coverage counts; sites without a position not counted)\n", times)
	fmt.Printf("  through func values %d, the module's interfaces %d, the standard library's interfaces (io.Reader...) %d\n", kinds["func"], kinds["module"], kinds["std"])
	for _, l := range lines {
		fmt.Println(l)
	}
	fmt.Println()
}

// byLayer counts the files, and the packages holding them, per layer.
func byLayer(files map[string]bool, lay layers) string {
	nf, np := map[int]int{}, map[int]int{}
	seen := map[string]bool{}
	for f := range files {
		d := filepath.Dir(f)
		l := lay.of(d)
		nf[l]++
		if !seen[d] {
			seen[d] = true
			np[l]++
		}
	}
	var parts []string
	for l := 0; l <= 9; l++ {
		if nf[l] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s: %d pkgs %d files", l, lay.titles[l], np[l], nf[l]))
		}
	}
	return strings.Join(parts, "; ")
}

// short names fn by its module-relative package.
func short(fn *ssa.Function, rel func(string) string) string {
	s := fn.RelString(nil)
	p := fn.Pkg.Pkg.Path()
	return strings.ReplaceAll(s, p, rel(p))
}

func sortedKeys(m map[string]bool) []string {
	var k []string
	for s := range m {
		k = append(k, s)
	}
	sort.Strings(k)
	return k
}

func check(err error) {
	if err != nil {
		fail("%v", err)
	}
}

func fail(f string, a ...any) {
	fmt.Fprintf(os.Stderr, "measure: "+f+"\n", a...)
	os.Exit(1)
}
