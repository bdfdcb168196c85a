// The operator console's entry: the page at /console/ (and every path under it).
import { render } from 'preact'
import '../ui/styles.css'
import './console.css'
import { App } from './App'

render(<App />, document.getElementById('app')!)
