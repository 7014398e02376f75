import CGIO
import NIOConcurrencyHelpers

/// One thread running a GLib main loop, on which every GIO call of the agent happens:
/// GLib objects are not for several threads at once, and D-Bus signal callbacks are
/// dispatched on the main context of the thread that subscribed.
public final class GLibLoop: @unchecked Sendable {
    let context: OpaquePointer
    private let loop: OpaquePointer

    public init() {
        context = g_main_context_new()
        loop = g_main_loop_new(context, 0)
        DetachedThread.start { [self] in
            g_main_context_push_thread_default(context)
            g_main_loop_run(loop)
            g_main_context_pop_thread_default(context)
        }
    }

    private final class Job {
        let body: () -> Void
        init(_ body: @escaping () -> Void) { self.body = body }
    }

    /// GLib hands a job to its thread under its own lock, made of futexes ThreadSanitizer
    /// does not see, which then reports the job's fields as a race. This lock, taken on
    /// both sides of the hand-over, is one it sees (and costs an uncontended lock each way).
    private static let handover = NIOLock()

    /// Runs `body` on the GLib thread and returns its result.
    public func run<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { (c: CheckedContinuation<T, Never>) in
            let job = Unmanaged.passRetained(Job { c.resume(returning: body()) })
            Self.handover.withLock {}
            g_main_context_invoke_full(context, 0, { data in
                GLibLoop.handover.withLock {}
                Unmanaged<Job>.fromOpaque(data!).takeRetainedValue().body()
                return 0  // G_SOURCE_REMOVE
            }, job.toOpaque(), nil)
        }
    }

    /// Runs `body` on the GLib thread, without waiting for it.
    func post(_ body: @escaping @Sendable () -> Void) {
        let job = Unmanaged.passRetained(Job(body))
        Self.handover.withLock {}
        g_main_context_invoke_full(context, 0, { data in
            GLibLoop.handover.withLock {}
            Unmanaged<Job>.fromOpaque(data!).takeRetainedValue().body()
            return 0  // G_SOURCE_REMOVE
        }, job.toOpaque(), nil)
    }

    /// Runs `body` on the GLib thread once `seconds` have passed.
    func after(_ seconds: Double, _ body: @escaping @Sendable () -> Void) {
        let job = Unmanaged.passRetained(Job(body))
        let source = g_timeout_source_new(guint(max(0, seconds * 1000)))
        Self.handover.withLock {}
        g_source_set_callback(source, { data in
            GLibLoop.handover.withLock {}
            Unmanaged<Job>.fromOpaque(data!).takeRetainedValue().body()
            return 0  // G_SOURCE_REMOVE
        }, job.toOpaque(), nil)
        g_source_attach(source, context)
        g_source_unref(source)
    }

    public func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await run { () -> Result<T, Error> in Result { try body() } }.get()
    }
}

/// A GError as a Swift error (and freed).
public struct GLibError: Error, CustomStringConvertible {
    public let description: String

    init(_ error: UnsafeMutablePointer<GError>?, _ fallback: String) {
        if let error, let message = error.pointee.message {
            description = String(cString: message)
            g_error_free(error)
        } else {
            description = fallback
        }
    }
}

/// A string GLib allocated, as a Swift string (and freed).
func takeGString(_ p: UnsafeMutablePointer<gchar>?) -> String? {
    guard let p else { return nil }
    defer { g_free(p) }
    return String(cString: p)
}
