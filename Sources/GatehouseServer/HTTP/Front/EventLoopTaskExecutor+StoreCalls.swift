import GatehouseHTTP
import GatehouseStore

/// A request's task on its connection's event loop runs its store calls' work and deadlines there too (``StoreCalls``).
extension EventLoopTaskExecutor: StoreCallExecutor {}
