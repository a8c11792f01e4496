//! Paging of listings: which slice of the matching items one answer carries. How a cloud names and
//! bounds its paging parameters is read by [`crate::reader::Params::offset_limit`] and
//! [`crate::reader::Params::page_number`]; this is only the slicing, the same for all of them.

/// A page of a listing: skip this many, take at most this many.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    skip: usize,
    take: usize,
}

impl Window {
    /// `offset` items skipped, `limit` taken (Tencent's `Offset`/`Limit`).
    pub fn offset_limit(offset: usize, limit: usize) -> Self {
        Self { skip: offset, take: limit }
    }

    /// Page `number` (1-based; 0 reads as 1) of `size` items (ECS, JD).
    pub fn number_size(number: usize, size: usize) -> Self {
        Self { skip: number.max(1).saturating_sub(1).saturating_mul(size), take: size }
    }

    /// The 1-based page number this window is (what ECS and JD echo back as `PageNumber`).
    pub fn number(&self) -> usize {
        self.skip.checked_div(self.take).map_or(1, |n| n + 1)
    }

    /// The most items one page holds (`PageSize`, `Limit`).
    pub fn size(&self) -> usize {
        self.take
    }

    /// (how many matched in all, the items of this page).
    pub fn apply<T>(&self, items: impl IntoIterator<Item = T>) -> (usize, Vec<T>) {
        let mut total = 0;
        let mut page = Vec::new();
        for (i, item) in items.into_iter().enumerate() {
            total += 1;
            if i >= self.skip && page.len() < self.take {
                page.push(item);
            }
        }
        (total, page)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_slice_and_count() {
        assert_eq!(Window::offset_limit(2, 3).apply(0..10), (10, vec![2, 3, 4]));
        assert_eq!(Window::offset_limit(9, 3).apply(0..10), (10, vec![9]));
        assert_eq!(Window::offset_limit(20, 3).apply(0..10), (10, vec![]));
        let w = Window::number_size(2, 4);
        assert_eq!(w.apply(0..10), (10, vec![4, 5, 6, 7]));
        assert_eq!((w.number(), w.size()), (2, 4));
        assert_eq!(Window::number_size(0, 4).apply(0..3), (3, vec![0, 1, 2]), "page 0 is page 1");
        assert_eq!(Window::number_size(usize::MAX, 4).apply(0..3).1, Vec::<i32>::new(), "no overflow");
    }
}
