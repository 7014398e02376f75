#if canImport(Glibc)
import Glibc
#endif

/// /dev/null, recognised by what it is (the same character device), not by its name: the
/// one device a stream may be written into by handoffd (`into`, Docs/LocalAPI.md §15.5).
public enum DevNull {
    public static func matches(_ st: stat) -> Bool {
        var null = stat()
        return (st.st_mode & S_IFMT) == S_IFCHR && stat("/dev/null", &null) == 0 && (null.st_mode & S_IFMT) == S_IFCHR && null.st_rdev == st.st_rdev
    }
}
