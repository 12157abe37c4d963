//go:build !linux

package main

// notDumpable does nothing where there is no prctl.
func notDumpable() {}
