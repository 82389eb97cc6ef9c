internal import Glibc

/// A C library opened when it is first needed (dlopen), not when the program starts: a library the
/// program links is loaded and relocated at every start, by every command, whether it is used or not.
/// Never closed: its functions are called for the life of the process.
public struct SharedLibrary: @unchecked Sendable {
    // dlopen's handle is immutable and may be used from any thread (dlsym is thread-safe).
    private let handle: UnsafeMutableRawPointer
    /// The name it was opened by.
    public let name: String
    /// The functions ``open(_:requiring:)`` found, so each is looked up once (a `dlsym` is a hash lookup
    /// through the loader's scopes, about 12,000 instructions).
    private var required: [String: UnsafeMutableRawPointer] = [:]

    /// Opens the first of `names` that the dynamic loader finds; the error is dlerror's words for each.
    public static func open(_ names: [String]) -> Result<SharedLibrary, LoadError> {
        var reasons: [String] = []
        for name in names {
            // RTLD_NOW: a missing symbol fails here, in words, not later as a crash; RTLD_LOCAL: its symbols
            // stay out of the global scope, where they could interpose on another library's.
            if let handle = dlopen(name, RTLD_NOW | RTLD_LOCAL) {
                return .success(SharedLibrary(handle: handle, name: name))
            }
            reasons.append(dlerror().map { String(cString: $0) } ?? "\(name): cannot be opened")
        }
        return .failure(LoadError(reasons: reasons))
    }

    /// The address of a function or variable the library exports, nil when it has none by that name.
    public func symbol(_ name: String) -> UnsafeMutableRawPointer? { dlsym(handle, name) }

    /// Opens the first of `names` the loader finds and checks that it exports every one of `functions`:
    /// a library opened at run time is used through a table of its functions, and a library with the
    /// right name but not the right functions must be refused in words, not called.
    public static func open(_ names: [String], requiring functions: [String]) -> Result<SharedLibrary, OpenFailure> {
        switch open(names) {
        case .failure(let error): return .failure(.notFound(error))
        case .success(var library):
            var missing: [String] = []
            for function in functions {
                if let address = library.symbol(function) { library.required[function] = address } else { missing.append(function) }
            }
            return missing.isEmpty ? .success(library) : .failure(.lacking(library: library.name, missing: missing))
        }
    }

    public enum OpenFailure: Error, Sendable {
        case notFound(LoadError)
        case lacking(library: String, missing: [String])
    }

    /// A function checked by ``open(_:requiring:)``, as the C type `T` (a `@convention(c)` function type).
    public func function<T>(_ name: String) -> T {
        guard let address = required[name] else {
            preconditionFailure("\(name) was not among the functions required when \(self.name) was opened")
        }
        return unsafeBitCast(address, to: T.self)
    }

    public struct LoadError: Error, Sendable, CustomStringConvertible {
        public var reasons: [String]
        public var description: String { reasons.joined(separator: "; ") }
    }
}
