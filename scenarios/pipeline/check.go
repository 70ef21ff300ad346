package pipeline

import (
	"fmt"

	"gpuplan.dev/gpuplan/scenarios"
)

// Check makes every check Scenario makes before its clocks start, running
// nothing: it builds the scenario (or the one variant asked for), each of
// its variants and its all-on-demand twin exactly as a run would (the
// build settles the pricing rules the reports apply). It is what `gpuplan
// scenario check` runs, so that a file it passes is one simulate does not
// refuse.
func Check(sc *scenarios.Scenario, o Options) error {
	base := sc
	if o.Variant != "" {
		v, err := sc.Variant(o.Variant)
		if err != nil {
			return err
		}
		sc = v
	}
	if err := checkOne(sc, o); err != nil {
		if o.Variant != "" {
			return fmt.Errorf("variant %s: %w", o.Variant, err)
		}
		return err
	}
	if o.Variant == "" && !o.NoVariants {
		for _, name := range base.VariantNames() {
			v, err := base.Variant(name)
			if err != nil {
				return err
			}
			if err := checkOne(v, o); err != nil {
				return fmt.Errorf("variant %s: %w", name, err)
			}
		}
	}
	if !o.NoSpotTwin && sc.UsesSpot() {
		od, err := sc.OnDemandOnly()
		if err != nil {
			return err
		}
		if err := checkOne(od, o); err != nil {
			return fmt.Errorf("the all-on-demand comparison run: %w", err)
		}
	}
	return nil
}

// checkOne builds one run as simulate does, its pricing rules with it,
// and closes it unrun.
func checkOne(sc *scenarios.Scenario, o Options) error {
	built, err := sc.Build(o.Build)
	if err != nil {
		return err
	}
	return built.Close()
}
