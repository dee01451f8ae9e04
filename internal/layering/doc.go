// Package layering holds the module's import layering (the house order,
// from the commands down to the wire types) and its test, which fails when a
// package imports one of a layer above its own or is in no layer.
package layering
