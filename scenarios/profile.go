package scenarios

import (
	"fmt"
	"sort"
	"strings"

	"gpuplan.dev/gpuplan/models"
	"gpuplan.dev/gpuplan/models/topology"
	"gpuplan.dev/gpuplan/scenarios/traces"
)

// LoadProfile reads a calibration profile (kind CalibrationProfile, as
// gpuplan calibrate writes it), strictly: unknown fields are errors with
// their line.
func LoadProfile(path string) (*models.CalibrationProfile, error) {
	data, err := traces.ReadInput(path)
	if err != nil {
		return nil, err
	}
	return ParseProfile(path, data)
}

// ParseProfile decodes and checks a calibration profile. Errors quote at
// most MaxQuote bytes of it (a file named by mistake, a secret, is not
// printed back).
func ParseProfile(file string, data []byte) (*models.CalibrationProfile, error) {
	p, err := parseProfile(file, data)
	return p, traces.BoundError(err)
}

func parseProfile(file string, data []byte) (*models.CalibrationProfile, error) {
	if err := traces.CheckLines(file, data); err != nil {
		return nil, err
	}
	p := &models.CalibrationProfile{}
	pos, err := decodeStrict(file, traces.DropBOM(data), p)
	if err != nil {
		return nil, err
	}
	at := func(path, format string, args ...any) error {
		return pos.Errorf(file, path, format, args...)
	}
	if p.APIVersion != models.ProfileAPIVersion || p.Kind != models.ProfileKind {
		return nil, at("kind", "want apiVersion %s, kind %s", models.ProfileAPIVersion, models.ProfileKind)
	}
	seen := map[string]bool{}
	for i, f := range p.Fabrics {
		path := fmt.Sprintf("fabrics[%d]", i)
		switch {
		case f.Name == "":
			return nil, at(path+".name", "is required")
		case seen[f.Name]:
			return nil, at(path+".name", "fabric %s is given twice", Quote(f.Name))
		case f.Kind != models.FabricNVLink && f.Kind != models.FabricPCIe && f.Kind != models.FabricNetwork:
			return nil, at(path+".kind", "is %s; want nvlink, pcie or network", Quote(f.Kind))
		case !(f.BusBWGBps > 0) || f.AlphaUS < 0 || f.Ranks < 1 || f.Nodes < 0:
			return nil, at(path, "needs a positive busbw_gbps and ranks, and a non-negative alpha_us")
		}
		seen[f.Name] = true
	}
	return p, nil
}

// fabrics is the run's fabrics: the built-in ones, replaced and added to
// by the scenario's calibration profile; it also says which were used.
func (s builder) fabrics(pools []string, names map[string]bool) (map[string]models.Fabric, string, error) {
	fabs := models.DefaultFabrics()
	for k, f := range topology.DefaultFabrics() {
		fabs[k] = f
	}
	from := "built-in fabrics (fits of published nccl-tests outputs)"
	if c := s.Spec.Calibration; c != "" {
		p, err := LoadProfile(s.path(c))
		if err != nil {
			return nil, "", err
		}
		var got []string
		for _, f := range p.Fabrics {
			fabs[f.Name] = f
			got = append(got, f.Name)
		}
		from = fmt.Sprintf("calibration profile %s (%s) over the built-in fabrics", c, strings.Join(got, ", "))
	}
	var missing []string
	for n := range names {
		if _, ok := fabs[n]; !ok {
			missing = append(missing, n)
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		known := make([]string, 0, len(fabs))
		for k := range fabs {
			known = append(known, k)
		}
		sort.Strings(known)
		return nil, "", s.errAt("spec.cluster", "pools %s name fabrics %s that are not known (known: %s)", strings.Join(pools, ", "), strings.Join(missing, ", "), strings.Join(known, ", "))
	}
	return fabs, from, nil
}

// hasTraining reports whether a synthetic class is data-parallel training.
func (s *Scenario) hasTraining() bool {
	if sy := s.Spec.Workload.Synthetic; sy != nil {
		for _, c := range sy.Classes {
			if c.Training != nil {
				return true
			}
		}
	}
	return false
}
