package dra

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"

	"k8s.io/apimachinery/pkg/api/resource"
)

// The CEL subset gpuplan evaluates in device selectors (the expressions
// users write for GPUs), without a CEL interpreter:
//
//	device.driver == "gpu.nvidia.com"            (and !=)
//	device.attributes["D"].NAME == "V"           (!=, <, <=, >, >= on strings and integers; in ["a", "b"])
//	device.capacity["D"].NAME.compareTo(quantity("40Gi")) >= 0   (any comparison with an integer)
//	device.capacity["D"].NAME.isGreaterThan(quantity("40Gi")), .isLessThan(...)
//	a && b, a || b, !a, (a), true, false
//
// Anything else (a has() or "in map" test, a version comparison, a
// function gpuplan does not know) does not parse: the caller reports the
// expression at its field. Quantities are compared as CEL's Kubernetes
// quantity library compares them; `>=` between two quantities is not CEL
// (the API server refuses it) and is refused here too, saying so.

// expr is a parsed selector.
type expr interface {
	eval(d *Device) value
}

// value is a CEL value: a string, an integer, a bool, a quantity, a list
// of strings, or an error (a missing attribute: CEL's "no such key").
type value struct {
	kind byte // 's', 'i', 'b', 'q', 'l', 'e'
	s    string
	i    int64
	b    bool
	q    resource.Quantity
	l    []value
}

func errValue(msg string) value { return value{kind: 'e', s: msg} }

type lexer struct {
	src  string
	pos  int
	toks []token
}

type token struct {
	kind byte // 'i' ident, 's' string, 'n' number, 'p' punctuation, 0 end
	text string
	at   int
}

func lex(src string) ([]token, error) {
	var out []token
	i := 0
	for i < len(src) {
		c := src[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '"' || c == '\'':
			j := i + 1
			var b strings.Builder
			for j < len(src) && src[j] != c {
				if src[j] == '\\' && j+1 < len(src) {
					j++
				}
				b.WriteByte(src[j])
				j++
			}
			if j >= len(src) {
				return nil, fmt.Errorf("unterminated string at offset %d", i)
			}
			out = append(out, token{'s', b.String(), i})
			i = j + 1
		case c >= '0' && c <= '9':
			j := i
			for j < len(src) && src[j] >= '0' && src[j] <= '9' {
				j++
			}
			out = append(out, token{'n', src[i:j], i})
			i = j
		case c == '_' || unicode.IsLetter(rune(c)):
			j := i
			for j < len(src) && (src[j] == '_' || unicode.IsLetter(rune(src[j])) || src[j] >= '0' && src[j] <= '9') {
				j++
			}
			out = append(out, token{'i', src[i:j], i})
			i = j
		default:
			two := ""
			if i+1 < len(src) {
				two = src[i : i+2]
			}
			switch two {
			case "==", "!=", "<=", ">=", "&&", "||":
				out = append(out, token{'p', two, i})
				i += 2
				continue
			}
			if strings.ContainsRune("()[].,!<>-", rune(c)) {
				out = append(out, token{'p', string(c), i})
				i++
				continue
			}
			return nil, fmt.Errorf("%q at offset %d is not in the CEL subset gpuplan evaluates", string(c), i)
		}
	}
	return append(out, token{0, "", len(src)}), nil
}

type parser struct {
	toks []token
	i    int
}

func (p *parser) peek() token { return p.toks[p.i] }
func (p *parser) next() token { t := p.toks[p.i]; p.i++; return t }
func (p *parser) is(text string) bool {
	t := p.peek()
	return (t.kind == 'p' || t.kind == 'i') && t.text == text
}
func (p *parser) expect(text string) error {
	if !p.is(text) {
		return p.unexpected("want " + strconv.Quote(text))
	}
	p.i++
	return nil
}
func (p *parser) unexpected(want string) error {
	t := p.peek()
	if t.kind == 0 {
		return fmt.Errorf("the expression ends early (%s)", want)
	}
	return fmt.Errorf("%q at offset %d is outside the CEL subset gpuplan evaluates (%s)", t.text, t.at, want)
}

// parseCEL parses a selector expression of the subset.
func parseCEL(src string) (expr, error) {
	toks, err := lex(src)
	if err != nil {
		return nil, err
	}
	p := &parser{toks: toks}
	e, err := p.or()
	if err != nil {
		return nil, err
	}
	if p.peek().kind != 0 {
		return nil, p.unexpected("want && or || or the end")
	}
	return e, nil
}

type andExpr struct{ a, b expr }
type orExpr struct{ a, b expr }
type notExpr struct{ a expr }
type cmpExpr struct {
	op   string
	a, b expr
}
type inExpr struct{ a, list expr }
type litExpr struct{ v value }
type listExpr struct{ items []expr }
type driverExpr struct{}
type attrExpr struct{ domain, name string }
type capExpr struct{ domain, name string }

// quantityCmp is capacity.compareTo(q), isGreaterThan(q), isLessThan(q).
type quantityCmp struct {
	fn string
	a  expr
	q  resource.Quantity
}

func (p *parser) or() (expr, error) {
	a, err := p.and()
	for err == nil && p.is("||") {
		p.i++
		var b expr
		if b, err = p.and(); err == nil {
			a = orExpr{a, b}
		}
	}
	return a, err
}

func (p *parser) and() (expr, error) {
	a, err := p.unary()
	for err == nil && p.is("&&") {
		p.i++
		var b expr
		if b, err = p.unary(); err == nil {
			a = andExpr{a, b}
		}
	}
	return a, err
}

func (p *parser) unary() (expr, error) {
	if p.is("!") {
		p.i++
		a, err := p.unary()
		return notExpr{a}, err
	}
	return p.cmp()
}

func (p *parser) cmp() (expr, error) {
	a, err := p.operand()
	if err != nil {
		return nil, err
	}
	t := p.peek()
	switch {
	case t.kind == 'p' && (t.text == "==" || t.text == "!=" || t.text == "<" || t.text == "<=" || t.text == ">" || t.text == ">="):
		p.i++
		b, err := p.operand()
		if err != nil {
			return nil, err
		}
		if isQuantity(a) || isQuantity(b) {
			return nil, fmt.Errorf("CEL has no %s between quantities (the API server refuses it): write .compareTo(quantity(\"...\")) %s 0, or .isGreaterThan / .isLessThan", t.text, t.text)
		}
		return cmpExpr{t.text, a, b}, nil
	case t.kind == 'i' && t.text == "in":
		p.i++
		l, err := p.operand()
		if err != nil {
			return nil, err
		}
		if _, ok := l.(listExpr); !ok {
			return nil, fmt.Errorf("`in` is evaluated over a list of literals only (a has() or key-in-map test is outside the subset)")
		}
		return inExpr{a, l}, nil
	}
	return a, nil
}

func isQuantity(e expr) bool {
	switch x := e.(type) {
	case capExpr:
		return true
	case litExpr:
		return x.v.kind == 'q'
	}
	return false
}

func (p *parser) str() (string, error) {
	t := p.peek()
	if t.kind != 's' {
		return "", p.unexpected("want a string")
	}
	p.i++
	return t.text, nil
}

func (p *parser) operand() (expr, error) {
	t := p.peek()
	switch {
	case t.kind == 's':
		p.i++
		return litExpr{value{kind: 's', s: t.text}}, nil
	case t.kind == 'n' || t.kind == 'p' && t.text == "-":
		p.i++
		neg := t.text == "-"
		if neg {
			t = p.next()
			if t.kind != 'n' {
				return nil, fmt.Errorf("want a number after - at offset %d", t.at)
			}
		}
		n, err := strconv.ParseInt(t.text, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not an integer gpuplan reads", t.text)
		}
		if neg {
			n = -n
		}
		return litExpr{value{kind: 'i', i: n}}, nil
	case t.kind == 'i' && (t.text == "true" || t.text == "false"):
		p.i++
		return litExpr{value{kind: 'b', b: t.text == "true"}}, nil
	case t.kind == 'i' && t.text == "quantity":
		q, err := p.quantity()
		return litExpr{value{kind: 'q', q: q}}, err
	case t.kind == 'p' && t.text == "(":
		p.i++
		e, err := p.or()
		if err != nil {
			return nil, err
		}
		return e, p.expect(")")
	case t.kind == 'p' && t.text == "[":
		p.i++
		var l listExpr
		for !p.is("]") {
			s, err := p.str()
			if err != nil {
				return nil, err
			}
			l.items = append(l.items, litExpr{value{kind: 's', s: s}})
			if !p.is(",") {
				break
			}
			p.i++
		}
		return l, p.expect("]")
	case t.kind == 'i' && t.text == "device":
		return p.device()
	}
	return nil, p.unexpected("want device.driver, device.attributes[...], device.capacity[...], a string, an integer or quantity(...)")
}

func (p *parser) quantity() (resource.Quantity, error) {
	p.i++ // quantity
	if err := p.expect("("); err != nil {
		return resource.Quantity{}, err
	}
	s, err := p.str()
	if err != nil {
		return resource.Quantity{}, err
	}
	q, err := resource.ParseQuantity(s)
	if err != nil {
		return q, fmt.Errorf("quantity(%q): %v", s, err)
	}
	return q, p.expect(")")
}

func (p *parser) device() (expr, error) {
	p.i++ // device
	if err := p.expect("."); err != nil {
		return nil, err
	}
	t := p.next()
	switch {
	case t.kind == 'i' && t.text == "driver":
		return driverExpr{}, nil
	case t.kind == 'i' && (t.text == "attributes" || t.text == "capacity"):
		if err := p.expect("["); err != nil {
			return nil, err
		}
		domain, err := p.str()
		if err != nil {
			return nil, err
		}
		if err := p.expect("]"); err != nil {
			return nil, err
		}
		if !p.is(".") {
			return nil, fmt.Errorf("device.%s[%q] is read by name (.NAME); a has() or key-in-map test is outside the subset gpuplan evaluates", t.text, domain)
		}
		p.i++
		n := p.next()
		if n.kind != 'i' {
			return nil, fmt.Errorf("want an attribute name at offset %d", n.at)
		}
		if t.text == "attributes" {
			if p.is(".") {
				return nil, fmt.Errorf("a method on attribute %s (a version comparison, a string function) is outside the subset gpuplan evaluates", n.text)
			}
			return attrExpr{domain, n.text}, nil
		}
		c := capExpr{domain, n.text}
		if !p.is(".") {
			return c, nil
		}
		p.i++
		fn := p.next()
		if fn.kind != 'i' || fn.text != "compareTo" && fn.text != "isGreaterThan" && fn.text != "isLessThan" {
			return nil, fmt.Errorf("capacity %s.%s: gpuplan evaluates compareTo, isGreaterThan and isLessThan", domain, n.text)
		}
		if err := p.expect("("); err != nil {
			return nil, err
		}
		if !p.is("quantity") {
			return nil, p.unexpected("want quantity(\"...\")")
		}
		q, err := p.quantity()
		if err != nil {
			return nil, err
		}
		if err := p.expect(")"); err != nil {
			return nil, err
		}
		return quantityCmp{fn.text, c, q}, nil
	}
	return nil, fmt.Errorf("device.%s is outside the subset gpuplan evaluates (device.driver, device.attributes, device.capacity)", t.text)
}

func (e andExpr) eval(d *Device) value {
	a, b := e.a.eval(d), e.b.eval(d)
	// CEL's && is commutative over errors: false wins.
	if a.kind == 'b' && !a.b || b.kind == 'b' && !b.b {
		return value{kind: 'b'}
	}
	if a.kind == 'e' {
		return a
	}
	if b.kind == 'e' {
		return b
	}
	if a.kind != 'b' || b.kind != 'b' {
		return errValue("&& of a non-bool")
	}
	return value{kind: 'b', b: true}
}

func (e orExpr) eval(d *Device) value {
	a, b := e.a.eval(d), e.b.eval(d)
	if a.kind == 'b' && a.b || b.kind == 'b' && b.b {
		return value{kind: 'b', b: true}
	}
	if a.kind == 'e' {
		return a
	}
	if b.kind == 'e' {
		return b
	}
	if a.kind != 'b' || b.kind != 'b' {
		return errValue("|| of a non-bool")
	}
	return value{kind: 'b'}
}

func (e notExpr) eval(d *Device) value {
	a := e.a.eval(d)
	if a.kind != 'b' {
		if a.kind == 'e' {
			return a
		}
		return errValue("! of a non-bool")
	}
	return value{kind: 'b', b: !a.b}
}

func (e cmpExpr) eval(d *Device) value {
	a, b := e.a.eval(d), e.b.eval(d)
	if a.kind == 'e' {
		return a
	}
	if b.kind == 'e' {
		return b
	}
	if a.kind != b.kind {
		return errValue("no such overload: comparing a " + kindWord(a.kind) + " with a " + kindWord(b.kind))
	}
	var c int
	switch a.kind {
	case 's':
		c = strings.Compare(a.s, b.s)
	case 'i':
		c = cmpInt(a.i, b.i)
	case 'b':
		if e.op != "==" && e.op != "!=" {
			return errValue("bools compare by == and != only")
		}
		if a.b != b.b {
			c = 1
		}
	}
	return value{kind: 'b', b: holds(e.op, c)}
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func holds(op string, c int) bool {
	switch op {
	case "==":
		return c == 0
	case "!=":
		return c != 0
	case "<":
		return c < 0
	case "<=":
		return c <= 0
	case ">":
		return c > 0
	}
	return c >= 0
}

func kindWord(k byte) string {
	return map[byte]string{'s': "string", 'i': "int", 'b': "bool", 'q': "quantity", 'l': "list"}[k]
}

func (e inExpr) eval(d *Device) value {
	a := e.a.eval(d)
	if a.kind == 'e' {
		return a
	}
	for _, it := range e.list.(listExpr).items {
		v := it.eval(d)
		if v.kind == a.kind && v.s == a.s && v.i == a.i {
			return value{kind: 'b', b: true}
		}
	}
	return value{kind: 'b'}
}

func (e litExpr) eval(*Device) value  { return e.v }
func (e listExpr) eval(*Device) value { return errValue("a list is not a value here") }
func (driverExpr) eval(d *Device) value {
	return value{kind: 's', s: d.Driver}
}

func (e attrExpr) eval(d *Device) value {
	if e.domain != d.Driver {
		return errValue(fmt.Sprintf("no such key: %s", e.domain))
	}
	v, ok := d.Attributes[e.name]
	if !ok {
		return errValue(fmt.Sprintf("no such key: %s", e.name))
	}
	return v
}

func (e capExpr) eval(d *Device) value {
	if e.domain != d.Driver {
		return errValue(fmt.Sprintf("no such key: %s", e.domain))
	}
	q, ok := d.Capacity[e.name]
	if !ok {
		return errValue(fmt.Sprintf("no such key: %s", e.name))
	}
	return value{kind: 'q', q: q}
}

func (e quantityCmp) eval(d *Device) value {
	a := e.a.eval(d)
	if a.kind == 'e' {
		return a
	}
	c := a.q.Cmp(e.q)
	switch e.fn {
	case "isGreaterThan":
		return value{kind: 'b', b: c > 0}
	case "isLessThan":
		return value{kind: 'b', b: c < 0}
	}
	return value{kind: 'i', i: int64(c)}
}
