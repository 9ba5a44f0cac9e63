import Foundation

/// One line saying what went wrong, for messages to people. Foundation's file errors (an `NSError` in Cocoa's
/// domain wrapping a POSIX error) become the system's reason, `Not a directory`, instead of their whole user-info
/// dictionary; every other error describes itself.
package func errorText(_ error: Error) -> String {
    let bridged = error as NSError
    if bridged.domain == NSPOSIXErrorDomain {
        return String(cString: strerror(Int32(bridged.code)))
    }
    guard bridged.domain == NSCocoaErrorDomain else { return "\(error)" }
    // The underlying error is a Swift `POSIXError` on Linux, an `NSError` elsewhere.
    if let underlying = bridged.userInfo[NSUnderlyingErrorKey] as? POSIXError {
        return String(cString: strerror(underlying.code.rawValue))
    }
    if let underlying = bridged.userInfo[NSUnderlyingErrorKey] as? NSError, underlying.domain == NSPOSIXErrorDomain {
        return String(cString: strerror(Int32(underlying.code)))
    }
    return bridged.localizedDescription
}
