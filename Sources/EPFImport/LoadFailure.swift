/// A table could not be applied for a reason the outcome message explains.
package struct LoadFailure: Error, CustomStringConvertible {
    package let description: String
    package init(_ message: String) { description = message }
}
