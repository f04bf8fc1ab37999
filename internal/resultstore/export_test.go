package resultstore

// RedisPrefix is the key prefix of r.
func RedisPrefix(r *Redis) string { return r.prefix }
