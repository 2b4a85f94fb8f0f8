import sys

from wafer_reasoner.demo.run import main

sys.exit(main())
