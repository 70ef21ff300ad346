package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"gpuplan.dev/gpuplan/scenarios"
)

// q quotes a flag's value in a message, bounded (a value of any length
// gives a message of a few lines).
func q(value string) string { return scenarios.Quote(value) }

// badFlag is a flag value the command cannot take: exit 2, the message
// naming the flag, quoting the value and saying what it would take.
func badFlag(flag, value, want string) error {
	return usageError{fmt.Errorf("--%s %s: %s", flag, q(value), want)}
}

// flagError is cobra's flag error as the user should read it: a value
// the flag's type cannot parse names the flag, the value and the kind of
// value wanted (pflag's own says "strconv.ParseUint: parsing ..."); any
// other (an unknown flag, a missing value) as pflag says it. Both exit 2.
func flagError(c *cobra.Command, err error) error {
	var iv *pflag.InvalidValueError
	if errors.As(err, &iv) && iv.GetFlag() != nil {
		if want := flagTypeWant(iv.GetFlag().Value.Type()); want != "" {
			err = fmt.Errorf("--%s %s: want %s", iv.GetFlag().Name, q(iv.GetValue()), want)
		}
	}
	return usageError{fmt.Errorf("%w (see '%s --help')", err, c.CommandPath())}
}

// flagTypeWant says what a value of a flag of type typ (as pflag names
// it) is; "" for a type it does not know.
func flagTypeWant(typ string) string {
	switch typ {
	case "int", "int64":
		return "a whole number"
	case "uint64":
		return "a whole number, 0 or more"
	case "float64":
		return "a number"
	case "bool":
		return "true or false"
	case "duration":
		return "a duration such as 90s, 5m or 1h30m"
	}
	return ""
}
