import { describe, expect, it } from 'vitest';
import { Sqlite, sqliteDriverPackage } from '../../src/store/dialect/better-sqlite3.js';

describe('the SQLite driver build', () => {
  it('is better-sqlite3 13 from Node 22 on and 12 on Node 20', () => {
    expect(sqliteDriverPackage(20)).toBe('better-sqlite3');
    expect(sqliteDriverPackage(22)).toBe('better-sqlite3-v13');
    expect(sqliteDriverPackage(24)).toBe('better-sqlite3-v13');
  });

  it('survives many prepared statements becoming garbage (Node 24 aborted on their finalisers with 12)', async () => {
    const db = new Sqlite(':memory:');
    for (let round = 0; round < 5; round++) {
      for (let i = 0; i < 20_000; i++) db.prepare(`select ${i} as x`).get();
      // Let background GC tasks run between rounds, where the abort happened.
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(db.prepare('select 41 + 1 as x').get()).toEqual({ x: 42 });
    db.close();
  });
});
