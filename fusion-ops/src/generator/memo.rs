//! Values the generator remembers per scope: each node's value at an index
//! (so a shared sub-expression is computed once), and what layers above the
//! engine keep beside it.

use super::{Generator, Index};
use crate::binder::Identity;

impl Generator {
    /// Opens a scope (a loop or branch body): values computed inside are
    /// forgotten when it closes.
    pub fn open_scope(&mut self) {
        self.scopes.push(self.values.len());
    }

    /// Closes the innermost scope.
    pub fn close_scope(&mut self) {
        if let Some(len) = self.scopes.pop() {
            self.values.truncate(len);
        }
        let depth = self.scopes.len();
        self.memos.retain(|(_, _, d)| *d <= depth);
    }

    /// A value computed earlier in the current scope for `key` at `at`.
    pub fn known(&self, key: Identity, at: &Index) -> Option<String> {
        self.values
            .iter()
            .rev()
            .find(|((id, idx), _)| *id == key && idx == at)
            .map(|(_, v)| v.clone())
    }

    /// Remembers the variable holding `key`'s value at `at`.
    pub fn remember(&mut self, key: Identity, at: &Index, var: &str) {
        self.values.push(((key, at.clone()), var.to_string()));
    }

    /// A value of type `M` remembered in the current scope for `key` at
    /// `at` by [`remember_memo`](Self::remember_memo). Layers above the
    /// engine keep their own per-element results here (reverse mode keeps
    /// a shared sub-expression's tangents), so that they follow the same
    /// scoping as generated values.
    pub fn known_memo<M: Clone + 'static>(&self, key: Identity, at: &Index) -> Option<M> {
        self.memos
            .iter()
            .rev()
            .filter(|((id, idx), _, _)| *id == key && idx == at)
            .find_map(|(_, memo, _)| memo.downcast_ref::<M>().cloned())
    }

    /// Remembers `memo` for `key` at `at` until the current scope closes.
    pub fn remember_memo<M: 'static>(&mut self, key: Identity, at: &Index, memo: M) {
        let depth = self.scopes.len();
        self.memos
            .push(((key, at.clone()), std::rc::Rc::new(memo), depth));
    }
}
