/**
 * Every test process hashes passwords at 2^10 instead of 2^15 (about 1 ms instead of 100-220 ms
 * a hash): what the suites check is who may sign in, not scrypt's cost, and the dashboard's route
 * tests ran three times as fast. `vitest.config.ts` also sets MAILVERDICT_PASSWORD_HASH_COST for
 * the `serve` processes the tests start. test/services/passwords.test.ts sets the cost itself.
 */
import { setPasswordHashCost } from '../../src/services/people/passwords.js';

setPasswordHashCost(10);
