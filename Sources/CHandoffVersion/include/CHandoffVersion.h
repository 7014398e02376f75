#ifndef CHANDOFF_VERSION_H
#define CHANDOFF_VERSION_H

// The software's version, as Package.swift set it at build time (HANDOFF_VERSION).
const char *handoff_software_version(void);

#endif
