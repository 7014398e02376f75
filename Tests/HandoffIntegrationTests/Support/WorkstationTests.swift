import Testing

/// Every suite with workstations in network namespaces, one test at a time: each test
/// runs several daemons and avahi-daemons (and moves hundreds of MB) on a 2-core machine,
/// and running two at once would test the scheduler rather than handoff. Root only (CI is
/// root). `.serialized` applies to every suite nested here.
@Suite(.serialized, .enabled(if: NetnsRun.available, "needs root and avahi-daemon for network namespaces"))
enum WorkstationTests {}
