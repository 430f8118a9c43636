// Filled in by the benchmark work.
print("flow benchmark: not written yet")
