#include "CHandoffVersion.h"

// Package.swift always defines it; the fallback only keeps other build systems compiling.
#ifndef HANDOFF_VERSION
#define HANDOFF_VERSION "unknown"
#endif

const char *handoff_software_version(void) { return HANDOFF_VERSION; }
