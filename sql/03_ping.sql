-- Readiness: the server answers and the service's database exists.
SELECT toUInt8(1)
