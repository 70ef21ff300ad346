package gpuop

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"

	yamlv3 "go.yaml.in/yaml/v3"
	corev1 "k8s.io/api/core/v1"

	"gpuplan.dev/gpuplan/models"
	"gpuplan.dev/gpuplan/validate/strict"
)

// Labels through which the GPU Operator gives a node its configuration.
const (
	LabelDevicePluginConfig = "nvidia.com/device-plugin.config"
	LabelMIGConfig          = "nvidia.com/mig.config"
	LabelMIGStrategy        = "nvidia.com/mig.strategy"
	ResourceGPU             = "nvidia.com/gpu"
)

// DevicePluginConfig is the device plugin's config file (version v1), as
// NVIDIA/k8s-device-plugin's api/config/v1 spells it.
type DevicePluginConfig struct {
	Version   string   `json:"version"`
	Flags     Flags    `json:"flags,omitempty"`
	Resources any      `json:"resources,omitempty"`
	Sharing   *Sharing `json:"sharing,omitempty"`
	Imex      any      `json:"imex,omitempty"`
}

// Flags are the device plugin's command-line flags in its config.
type Flags struct {
	MigStrategy             string `json:"migStrategy,omitempty"`
	FailOnInitError         *bool  `json:"failOnInitError,omitempty"`
	MpsRoot                 string `json:"mpsRoot,omitempty"`
	NvidiaDriverRoot        string `json:"nvidiaDriverRoot,omitempty"`
	NvidiaDevRoot           string `json:"nvidiaDevRoot,omitempty"`
	GDSEnabled              *bool  `json:"gdsEnabled,omitempty"`
	MOFEDEnabled            *bool  `json:"mofedEnabled,omitempty"`
	UseNodeFeatureAPI       *bool  `json:"useNodeFeatureAPI,omitempty"`
	DeviceDiscoveryStrategy string `json:"deviceDiscoveryStrategy,omitempty"`
	Plugin                  any    `json:"plugin,omitempty"`
	GFD                     any    `json:"gfd,omitempty"`
}

// Sharing is the config's sharing section: time-slicing or MPS.
type Sharing struct {
	TimeSlicing *Replicated `json:"timeSlicing,omitempty"`
	MPS         *Replicated `json:"mps,omitempty"`
}

// Replicated advertises each GPU of the named resources Replicas times.
type Replicated struct {
	RenameByDefault            bool                 `json:"renameByDefault,omitempty"`
	FailRequestsGreaterThanOne bool                 `json:"failRequestsGreaterThanOne,omitempty"`
	Resources                  []ReplicatedResource `json:"resources"`
}

// ReplicatedResource is one resource's replicas.
type ReplicatedResource struct {
	Name     string `json:"name"`
	Rename   string `json:"rename,omitempty"`
	Devices  any    `json:"devices,omitempty"`
	Replicas int32  `json:"replicas"`
}

// MigPartedConfig is mig-parted's config file (version v1).
type MigPartedConfig struct {
	Version    string                    `json:"version"`
	MigConfigs map[string][]MigDeviceSet `json:"mig-configs"`
}

// MigDeviceSet partitions a set of GPUs.
type MigDeviceSet struct {
	Devices      any            `json:"devices"`
	DeviceFilter any            `json:"device-filter,omitempty"`
	MigEnabled   bool           `json:"mig-enabled"`
	MigDevices   map[string]int `json:"mig-devices,omitempty"`
}

// Sharing of a device plugin config, as gpuplan models it.
type PluginSharing struct {
	// MIGStrategy is none, single or mixed ("" when the config says none).
	MIGStrategy string
	// Replicas is how many pods share each GPU (0: not shared); MPS is
	// whether the config shares by MPS rather than time-slicing.
	Replicas int32
	MPS      bool
	// Where is the config, file:line, for notes.
	Where string
}

// Configs are the device plugin and mig-parted configurations of the
// files read.
type Configs struct {
	// Plugin holds each device plugin config by its data key (the file's
	// base name for a bare config file).
	Plugin map[string]PluginSharing
	// MIG holds each mig-parted configuration by name, with where it is.
	MIG      map[string][]MigDeviceSet
	migWhere map[string]string
	// Notes are what was read and what was skipped.
	Notes []string
}

// New returns empty Configs.
func New() *Configs {
	return &Configs{Plugin: map[string]PluginSharing{}, MIG: map[string][]MigDeviceSet{}, migWhere: map[string]string{}}
}

// Add reads one file: ConfigMaps whose data hold the device plugin's or
// mig-parted's config (other objects are skipped, each noted), or one bare
// config file. Errors are InputErrors at the file's line and field.
func (c *Configs) Add(file string, data []byte) error {
	var probe map[string]any
	if err := yamlv3.Unmarshal(data, &probe); err == nil && probe["kind"] == nil && probe["version"] != nil {
		base := file[strings.LastIndexAny(file, `/\`)+1:]
		return c.addConfig(file, 0, 0, base, "", data)
	}
	ms, err := strict.Manifests(file, data)
	if err != nil {
		return err
	}
	lines := strings.Split(string(data), "\n")
	read := 0
	for _, m := range ms {
		if m.Kind != "ConfigMap" || m.APIVersion != "v1" {
			c.Notes = append(c.Notes, fmt.Sprintf("%s:%d: %s %s skipped: not a GPU Operator config", file, m.Line, m.Kind, m.Name))
			continue
		}
		var cm corev1.ConfigMap
		pos, err := m.Decode(file, &cm, strict.Options{What: "a ConfigMap"})
		if err != nil {
			return err
		}
		for _, k := range slices.Sorted(maps.Keys(cm.Data)) {
			field := "data[" + strconv.Quote(k) + "]"
			line := m.Line
			if p, ok := pos[field]; ok {
				line = p[0]
			}
			// A block scalar's lines follow its key, indented.
			indent := 0
			if line < len(lines) {
				next := lines[line]
				indent = len(next) - len(strings.TrimLeft(next, " "))
			}
			if err := c.addConfig(file, line, indent, k, field, []byte(cm.Data[k])); err != nil {
				return err
			}
			read++
		}
	}
	if read == 0 {
		return strict.Errorf(file, 0, "", "no ConfigMap of the device plugin's or mig-parted's config in the file")
	}
	return nil
}

// addConfig reads one config; line is its data key's line (the config's
// own lines follow it, indented indent columns), key its data key, field
// its path.
func (c *Configs) addConfig(file string, line, indent int, key, field string, data []byte) error {
	shift := func(err error) error {
		if e, ok := err.(*strict.InputError); ok {
			if e.Line > 0 && line > 0 {
				e.Line += line
				if e.Column > 0 {
					e.Column += indent
				}
			}
			if field != "" {
				e.Field = strings.TrimSuffix(field+"."+e.Field, ".")
			}
		}
		return err
	}
	var probe map[string]any
	if err := yamlv3.Unmarshal(data, &probe); err != nil {
		return shift(strict.SyntaxError(file, err))
	}
	at := fmt.Sprintf("%s:%d", file, max(line, 1))
	if _, ok := probe["mig-configs"]; ok {
		var mc MigPartedConfig
		if _, err := strict.Decode(file, data, &mc, strict.Options{What: "mig-parted's config"}); err != nil {
			return shift(err)
		}
		if mc.Version != "v1" {
			return shift(strict.Errorf(file, 1, "version", "is %s; gpuplan reads mig-parted's config version v1", strict.Quote(mc.Version)))
		}
		for _, name := range slices.Sorted(maps.Keys(mc.MigConfigs)) {
			if w, ok := c.migWhere[name]; ok {
				return shift(strict.Errorf(file, 1, "mig-configs."+name, "is defined twice (also at %s)", w))
			}
			c.MIG[name] = mc.MigConfigs[name]
			c.migWhere[name] = at
		}
		return nil
	}
	var dp DevicePluginConfig
	if _, err := strict.Decode(file, data, &dp, strict.Options{What: "the device plugin's config"}); err != nil {
		return shift(err)
	}
	if dp.Version != "v1" {
		return shift(strict.Errorf(file, 1, "version", "is %s; gpuplan reads the device plugin's config version v1", strict.Quote(dp.Version)))
	}
	ps := PluginSharing{Where: at}
	switch dp.Flags.MigStrategy {
	case "", "none":
	case "single", "mixed":
		ps.MIGStrategy = dp.Flags.MigStrategy
	default:
		return shift(strict.Errorf(file, 0, "flags.migStrategy", "is %s; the device plugin's strategies are none, single and mixed", strict.Quote(dp.Flags.MigStrategy)))
	}
	if sh := dp.Sharing; sh != nil {
		if sh.TimeSlicing != nil && sh.MPS != nil {
			return shift(strict.Errorf(file, 0, "sharing", "gives both timeSlicing and mps; the device plugin takes one"))
		}
		r, what := sh.TimeSlicing, "sharing.timeSlicing"
		if sh.MPS != nil {
			r, what, ps.MPS = sh.MPS, "sharing.mps", true
		}
		if r != nil {
			if r.RenameByDefault {
				return shift(strict.Errorf(file, 0, what+".renameByDefault", "renames the shared GPUs nvidia.com/gpu.shared; gpuplan's pods ask for nvidia.com/gpu, so it models shares under that name only"))
			}
			for i, res := range r.Resources {
				rf := fmt.Sprintf("%s.resources[%d]", what, i)
				if res.Name != ResourceGPU {
					return shift(strict.Errorf(file, 0, rf+".name", "is %s; gpuplan shares nvidia.com/gpu (MIG devices are not shared)", strict.Quote(res.Name)))
				}
				if res.Rename != "" {
					return shift(strict.Errorf(file, 0, rf+".rename", "renames the shared GPUs; gpuplan models shares of nvidia.com/gpu only"))
				}
				if res.Devices != nil && res.Devices != "all" {
					return shift(strict.Errorf(file, 0, rf+".devices", "shares some GPUs of a node; gpuplan shares every GPU of a pool alike (leave devices out, or all)"))
				}
				if res.Replicas < 2 {
					return shift(strict.Errorf(file, 0, rf+".replicas", "is %d; the device plugin wants at least 2 replicas", res.Replicas))
				}
				ps.Replicas = res.Replicas
			}
		}
	}
	if old, ok := c.Plugin[key]; ok {
		return shift(strict.Errorf(file, 0, "", "the device plugin config %s is given twice (also at %s)", strict.Quote(key), old.Where))
	}
	c.Plugin[key] = ps
	return nil
}

// PluginFor is the device plugin config a node with these labels runs:
// the one its nvidia.com/device-plugin.config label names, else the only
// one read (the device plugin's chart takes a lone config as the default).
// ok is false where no config applies.
func (c *Configs) PluginFor(labels map[string]string) (ps PluginSharing, key string, ok bool, err error) {
	if k, has := labels[LabelDevicePluginConfig]; has {
		ps, ok = c.Plugin[k]
		if !ok {
			return ps, k, false, fmt.Errorf("%s is %s, which no device plugin config read names (%s)", LabelDevicePluginConfig, strict.Quote(k), strings.Join(slices.Sorted(maps.Keys(c.Plugin)), ", "))
		}
		return ps, k, true, nil
	}
	if len(c.Plugin) == 1 {
		for k, v := range c.Plugin {
			return v, k, true, nil
		}
	}
	return ps, "", false, nil
}

// MIGLayout is each GPU's MIG instances for a node of model with gpus GPUs
// labelled nvidia.com/mig.config=name: the named configuration read, else
// one of the GPU Operator's default configuration (all-disabled,
// all-<profile>, all-balanced). nil means MIG off.
func (c *Configs) MIGLayout(model string, gpus int32, name string) ([]string, error) {
	sets, ok := c.MIG[name]
	if !ok {
		if name == "all-disabled" || name == "" {
			return nil, nil
		}
		if strings.HasPrefix(name, "all-") {
			return models.MIGLayout(model, name)
		}
		return nil, fmt.Errorf("%s is %s, which is neither a configuration of the mig-parted configs read (%s) nor one of the GPU Operator's default ones (all-disabled, all-<profile>, all-balanced)",
			LabelMIGConfig, strict.Quote(name), strings.Join(slices.Sorted(maps.Keys(c.MIG)), ", "))
	}
	where := c.migWhere[name]
	// Sets with a device-filter name GPU models by PCI ID; gpuplan takes
	// the set whose profiles the model has.
	var chosen []MigDeviceSet
	for _, s := range sets {
		if s.DeviceFilter == nil || profilesExist(model, s) {
			chosen = append(chosen, s)
		}
	}
	if len(chosen) == 0 {
		return nil, fmt.Errorf("mig-parted's %s (%s) has no device set for %s", strict.Quote(name), where, model)
	}
	var layout []string
	covered := map[int]bool{}
	all := false
	for i, s := range chosen {
		var l []string
		if s.MigEnabled {
			for _, p := range slices.Sorted(maps.Keys(s.MigDevices)) {
				prof := strings.TrimSuffix(p, "+me")
				for range s.MigDevices[p] {
					l = append(l, prof)
				}
			}
			if len(l) == 0 {
				return nil, fmt.Errorf("mig-parted's %s (%s): device set %d enables MIG with no mig-devices", strict.Quote(name), where, i)
			}
			if _, err := models.PlaceMIG(model, l); err != nil {
				return nil, fmt.Errorf("mig-parted's %s (%s): %v", strict.Quote(name), where, err)
			}
		}
		switch d := s.Devices.(type) {
		case string:
			if d != "all" {
				return nil, fmt.Errorf("mig-parted's %s (%s): devices is %s; want all or a list of GPU indices", strict.Quote(name), where, strict.Quote(d))
			}
			all = true
			for g := range gpus {
				covered[int(g)] = true
			}
		case []any:
			for _, x := range d {
				f, ok := x.(float64)
				g := int(f)
				if !ok || float64(g) != f || g < 0 || g >= int(gpus) {
					return nil, fmt.Errorf("mig-parted's %s (%s): devices lists %v, not a GPU index of a %d-GPU node", strict.Quote(name), where, x, gpus)
				}
				covered[g] = true
			}
		default:
			return nil, fmt.Errorf("mig-parted's %s (%s): devices is required (all or a list of GPU indices)", strict.Quote(name), where)
		}
		if i > 0 && !slices.Equal(l, layout) {
			return nil, fmt.Errorf("mig-parted's %s (%s) partitions the GPUs of a node differently; gpuplan partitions every GPU of a pool alike", strict.Quote(name), where)
		}
		layout = l
	}
	if !all && len(covered) != int(gpus) {
		return nil, fmt.Errorf("mig-parted's %s (%s) configures %d of a node's %d GPUs; gpuplan partitions every GPU of a pool alike", strict.Quote(name), where, len(covered), gpus)
	}
	if len(layout) == 0 {
		return nil, nil
	}
	sort.Strings(layout)
	return layout, nil
}

func profilesExist(model string, s MigDeviceSet) bool {
	for p := range s.MigDevices {
		if _, ok := models.MIGProfileByName(model, strings.TrimSuffix(p, "+me")); !ok {
			return false
		}
	}
	return true
}
