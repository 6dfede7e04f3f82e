// Opens a database and prints what migration did, as one JSON line. Started several times at
// once by the storage suite to race on a fresh file. Runs under Bun (TS) or, compiled, under Node.
import { openDatabase } from "../../src/store/database.js"

const file = process.argv[2]
if (!file) throw new Error("usage: open-worker <db file>")
// Start together: every worker waits for the same wall-clock instant.
const startAt = Number(process.argv[3] ?? 0)
while (Date.now() < startAt) {
  /* spin: a timer would be too coarse to make the opens overlap */
}
const { db, migrated } = openDatabase(file)
db.close()
console.log(JSON.stringify(migrated))
