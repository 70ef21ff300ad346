// Package plugins is the registry of scheduler plugins: one explicit map
// from plugin name to factory, and NewProfile, which turns a list of plugin
// configurations into a scheduler.Profile with each plugin at every
// extension point it implements. Each plugin lives in its own package
// below this one and declares its Name.
package plugins
