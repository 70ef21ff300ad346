// Package models holds the pure data and mathematics the simulator is built
// on: probability distributions that draw from an explicit *rand.Rand,
// closed-form queueing results used to check the simulator against theory,
// and (as the project grows) GPU, price and interruption catalogs.
//
// Nothing here imports another package of the project and nothing here keeps
// mutable state between calls: every random draw takes its source as an
// argument so a run is reproducible from its seed.
package models
