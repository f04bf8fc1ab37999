package resultstore

// RedisPrefix is the key prefix of r.
func RedisPrefix(r *Redis) string { return r.prefix }

// PrincipalSessions is the attack of one principal's four sessions on s.
var PrincipalSessions = principalSessions
