import GatehouseStore
import Testing

/// `StoreError` is a struct with stable codes (it can grow), caught by code as an enum case would be.
@Suite(.timeLimit(.minutes(3))) struct StoreErrorTests {
    @Test(.timeLimit(.minutes(3))) func aStoreErrorIsCaughtByItsCode() {
        func failing(_ error: StoreError) throws { throw error }
        var caught: [String] = []
        for error in [StoreError.duplicate, .notFound] {
            do {
                try failing(error)
            } catch StoreError.notFound {
                caught.append("notFound")
            } catch StoreError.duplicate {
                caught.append("duplicate")
            } catch {
                caught.append("other")
            }
        }
        #expect(caught == ["duplicate", "notFound"])
        #expect(StoreError.duplicate.code == .duplicate && StoreError.duplicate != .notFound)
    }
}
