package scenarios

import (
	"fmt"
	"reflect"
	"sort"

	yamlv3 "go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/api/resource"

	"gpuplan.dev/gpuplan/scenarios/traces"
	"gpuplan.dev/gpuplan/sim"
	"gpuplan.dev/gpuplan/validate/strict"
)

// The strict reading every scenarios file goes through lives in
// validate/strict; these names keep the package's own spelling of it.

// InputError is bad input: a file that cannot be read as what it claims to
// be. It names the file, the line (and column when known) and the field.
// Commands exit 2 on it.
type InputError = strict.InputError

// positions maps a field path to its line and column in the file.
type positions = strict.Positions

// Bounds on what gpuplan reads (see validate/strict for each).
const (
	MaxLineBytes        = strict.MaxLineBytes
	MaxQuote            = strict.MaxQuote
	MaxFileBytes        = strict.MaxFileBytes
	MaxPodMilliCPU      = strict.MaxPodMilliCPU
	MaxPodMemoryMiB     = strict.MaxPodMemoryMiB
	MaxPodGPUs          = strict.MaxPodGPUs
	MaxReplicas         = strict.MaxReplicas
	MaxNodes            = strict.MaxNodes
	MaxTimelineBuckets  = strict.MaxTimelineBuckets
	MaxDescriptionBytes = strict.MaxDescriptionBytes
	// MaxJobs bounds the jobs of one run (synthetic counts, trace rows,
	// arrivals generated over the horizon).
	MaxJobs = sim.MaxJobs
)

// Quote quotes at most MaxQuote bytes of input (strict.Quote).
func Quote(s string) string { return strict.Quote(s) }

// MilliCPU is a CPU quantity in millicores, bounded by MaxPodMilliCPU.
func MilliCPU(q resource.Quantity) (int64, error) { return strict.MilliCPU(q) }

// MemoryMiB is a memory quantity in MiB (rounded up), bounded by MaxPodMemoryMiB.
func MemoryMiB(q resource.Quantity) (int64, error) { return strict.MemoryMiB(q) }

// RegularFile checks that path is a regular file (strict.RegularFile).
func RegularFile(path string) error { return strict.RegularFile(path) }

// ReadFileBounded reads a whole regular file of at most MaxFileBytes.
func ReadFileBounded(path string) ([]byte, error) { return strict.ReadFileBounded(path) }

// FindNonFinite finds the first .inf or .nan under n, with its field path.
func FindNonFinite(n *yamlv3.Node, path string) (*yamlv3.Node, string) {
	return strict.FindNonFinite(n, path)
}

func inputErr(file string, line int, field, format string, args ...any) *InputError {
	return strict.Errorf(file, line, field, format, args...)
}

// scenarioOptions adapts strict decoding to the scenario schema: variants
// are patches of the spec, durations and distributions may be one scalar,
// quantities are bounded by their field's meaning.
func scenarioOptions() strict.Options {
	return strict.Options{
		What:    "a scenario",
		Patches: map[reflect.Type]reflect.Type{reflect.TypeOf(SpecPatch{}): reflect.TypeOf(Spec{})},
		Scalars: map[reflect.Type]func(*yamlv3.Node) error{
			reflect.TypeOf(Duration{}):     durationScalar,
			reflect.TypeOf(DurationDist{}): durationScalar,
			reflect.TypeOf(NumDist{}): func(n *yamlv3.Node) error {
				if n.Tag != "!!int" && n.Tag != "!!float" {
					return fmt.Errorf("expected a number or a mapping (values, weights; or min, max), got %s", strict.KindName(n))
				}
				return nil
			},
		},
		Quantity: checkScenarioQuantity,
	}
}

// durationScalar checks a duration written as a scalar.
func durationScalar(n *yamlv3.Node) error {
	if n.Tag != "!!str" {
		return fmt.Errorf("expected a duration such as \"30m\", \"6h\" or \"3d\", got %s", strict.KindName(n))
	}
	_, err := ParseDuration(n.Value)
	return err
}

// decodeStrict decodes one scenario-schema YAML document into out.
func decodeStrict(file string, data []byte, out any) (positions, error) {
	return strict.Decode(file, data, out, scenarioOptions())
}

// DecodeStrictYAML decodes one YAML document into out (a pointer to a
// struct with json tags) as scenarios are: unknown or mistyped fields are
// InputErrors naming the line, column and field path. It returns where
// each field path is, for errors found later.
func DecodeStrictYAML(file string, data []byte, out any) (map[string][2]int, error) {
	return decodeStrict(file, data, out)
}

// sortedKeys is m's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// BoundError bounds an error's message (traces.BoundError): an
// InputError keeps its file, line and field.
func BoundError(err error) error { return traces.BoundError(err) }

// CheckLines refuses data (a file read whole) with a line longer than
// MaxLineBytes, naming the file and line (traces.CheckLines).
func CheckLines(file string, data []byte) error { return traces.CheckLines(file, data) }

// ReadInput reads a whole input file (a rules file, a profile): a regular
// file of at most MaxFileBytes, lines of at most MaxLineBytes, errors
// naming the file (traces.ReadInput).
func ReadInput(path string) ([]byte, error) { return traces.ReadInput(path) }

// ReadErr is why a file could not be read, without the path the error
// repeats ("no such file" for one missing).
func ReadErr(err error) string { return strict.ReadErr(err) }
