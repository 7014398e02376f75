#if canImport(Glibc)
import Glibc
#endif

/// A thread of its own for blocking work (a GLib main loop, blocking reads of stdin), started
/// with pthreads: Foundation's `Thread` would link all of Foundation and its 34 MB of ICU
/// data into the session agent and the browser host, which need neither.
public enum DetachedThread {
    private final class Body {
        let run: () -> Void
        init(_ run: @escaping () -> Void) { self.run = run }
    }

    /// Runs `body` on a new detached thread.
    public static func start(_ body: @escaping @Sendable () -> Void) {
        let box = Unmanaged.passRetained(Body(body)).toOpaque()
        var thread = pthread_t()
        let rc = pthread_create(&thread, nil, { argument in
            Unmanaged<Body>.fromOpaque(argument!).takeRetainedValue().run()
            return nil
        }, box)
        precondition(rc == 0, "pthread_create failed: \(rc)")
        pthread_detach(thread)
    }
}
