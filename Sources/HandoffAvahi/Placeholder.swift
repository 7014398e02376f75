// Filled in by the Avahi wrapper work.
