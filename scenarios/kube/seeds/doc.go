// Package seeds holds the table of the articles' manifests this project
// started from (testdata/, copied from the articles with their
// PROVENANCE): each file, the slot of a scenario it is given in, and what
// gpuplan makes of it. The package has no code of its own; its test holds
// the table the README prints.
package seeds
