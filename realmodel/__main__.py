from realmodel.run import main

raise SystemExit(main())
