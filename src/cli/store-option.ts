// The `--store URI` option every command that reads or writes a ledger takes.
export const STORE_OPTION = "--store <uri>";
export const STORE_OPTION_HELP =
  "ledger store URI (default: $WARRANT_STORE, else sqlite:.warrant/ledger.db)";
