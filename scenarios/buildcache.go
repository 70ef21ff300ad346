package scenarios

import (
	"crypto/sha256"
	"encoding/binary"
	"hash"
	"math"
	"path/filepath"
	"reflect"
	"sync"

	"gpuplan.dev/gpuplan/models/serving"
	"gpuplan.dev/gpuplan/sim/services"
)

// BuildCache keeps what one build of a scenario reads or computes for
// the other builds of the same gpuplan command: its variants, the
// all-on-demand twin and the spot curve's 80 runs, a sweep's points and
// seeds each build the scenario again. It holds the request traces read
// (each file parsed once at a maxModelLen) and the LLM services' plans
// (a replica's capacity and the fast model's curve, computed once for
// the same engine, lengths and routing: 1.5 s a build for the chat
// example, where its run takes 3 ms; an engine over several GPUs is
// computed at every build, see deepHash). What it hands out is shared and
// never changed, so every build gets what it would have computed. Safe
// for concurrent builds; a nil *BuildCache computes everything each
// time.
type BuildCache struct {
	mu   sync.Mutex
	done map[[sha256.Size]byte]*computed
}

// llmTrace is a request trace as read: its requests and their prompt
// and output lengths' empirical distributions.
type llmTrace struct {
	reqs    []serving.LLMRequest
	in, out serving.TokenDist
}

// trace gives file's trace at maxModelLen, read by load the first time
// it is asked for.
func (c *BuildCache) trace(file string, maxModelLen int, load func() (llmTrace, error)) (llmTrace, error) {
	if abs, err := filepath.Abs(file); err == nil {
		file = abs
	}
	v, err := c.once("trace", []any{file, maxModelLen}, func() (any, error) { return load() })
	if err != nil {
		return llmTrace{}, err
	}
	return v.(llmTrace), nil
}

// computed is a value computed once, or the error.
type computed struct {
	once sync.Once
	v    any
	err  error
}

// once gives what compute gives for what, parts: computed the first
// time the same what and parts (the same to the last field and bit,
// pointers followed: deepHash) are asked for. Parts that cannot be
// hashed are computed every time.
func (c *BuildCache) once(what string, parts []any, compute func() (any, error)) (any, error) {
	if c == nil {
		return compute()
	}
	h := sha256.New()
	if !deepHash(h, reflect.ValueOf(what)) {
		return compute()
	}
	for _, p := range parts {
		if !deepHash(h, reflect.ValueOf(p)) {
			return compute()
		}
	}
	var key [sha256.Size]byte
	h.Sum(key[:0])
	c.mu.Lock()
	if c.done == nil {
		c.done = map[[sha256.Size]byte]*computed{}
	}
	p := c.done[key]
	if p == nil {
		p = &computed{}
		c.done[key] = p
	}
	c.mu.Unlock()
	p.once.Do(func() { p.v, p.err = compute() })
	return p.v, p.err
}

// llmCapacity is x's capacity per replica (serving.DisaggCapacity or
// LLMCapacity), computed once for the same x.
func (c *BuildCache) llmCapacity(x *services.LLM) (float64, error) {
	v, err := c.once("capacity", []any{x}, func() (any, error) {
		if x.Disagg != nil {
			return serving.DisaggCapacity(*x.Disagg, x.Input, x.Output)
		}
		return serving.LLMCapacity(x.Config, x.Input, x.Output)
	})
	if err != nil {
		return 0, err
	}
	return v.(float64), nil
}

// llmCurve is services.NewLLMCurve(x, minRate), computed once for the
// same x and minRate (the curve is read-only: runs share it).
func (c *BuildCache) llmCurve(x *services.LLM, minRate float64) (*services.LLMCurve, error) {
	v, err := c.once("curve", []any{x, minRate}, func() (any, error) { return services.NewLLMCurve(x, minRate) })
	if err != nil {
		return nil, err
	}
	return v.(*services.LLMCurve), nil
}

// deepHash writes v to h, every field exported or not, pointers and
// interfaces followed to what they hold, each value with its kind and
// each slice with its length so that no two different values write the
// same bytes. It reports false for what it cannot write faithfully (a
// map, whose order is random; a function but nil, a channel, an unsafe
// pointer): a replica's engine over several GPUs, whose all-reduces and
// sends are functions of its fabric, is computed at every build.
func deepHash(h hash.Hash, v reflect.Value) bool {
	var b [9]byte
	put := func(k reflect.Kind, x uint64) {
		b[0] = byte(k)
		binary.LittleEndian.PutUint64(b[1:], x)
		h.Write(b[:])
	}
	switch k := v.Kind(); k {
	case reflect.Bool:
		x := uint64(0)
		if v.Bool() {
			x = 1
		}
		put(k, x)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		put(k, uint64(v.Int()))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		put(k, v.Uint())
	case reflect.Float32, reflect.Float64:
		put(k, math.Float64bits(v.Float()))
	case reflect.String:
		put(k, uint64(v.Len()))
		h.Write([]byte(v.String()))
	case reflect.Slice, reflect.Array:
		put(k, uint64(v.Len()))
		for i := range v.Len() {
			if !deepHash(h, v.Index(i)) {
				return false
			}
		}
	case reflect.Struct:
		put(k, uint64(v.NumField()))
		for i := range v.NumField() {
			if !deepHash(h, v.Field(i)) {
				return false
			}
		}
	case reflect.Func:
		// A nil function (an engine without tensor or pipeline
		// parallelism prices no all-reduce or send) is written; any other
		// cannot be compared.
		if !v.IsNil() {
			return false
		}
		put(k, 0)
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			put(k, 0)
			return true
		}
		put(k, 1)
		if k == reflect.Interface {
			t := v.Elem().Type().String()
			put(k, uint64(len(t)))
			h.Write([]byte(t))
		}
		return deepHash(h, v.Elem())
	default:
		return false
	}
	return true
}
