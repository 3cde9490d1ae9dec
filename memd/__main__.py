from memd.cli import main

raise SystemExit(main())
