-- What each order has been paid so far. The LEFT JOIN keeps an order without payments as
-- a row padded with nulls, and replaces it with the joined rows when its payments come;
-- the aggregate folds those changes into one row per order.
SELECT o.order_id, o.amount, COUNT(p.payment_id) AS payments, COALESCE(SUM(p.amount), 0) AS paid
FROM ref('all_orders') AS o
LEFT JOIN source('payments') AS p ON o.order_id = p.order_id
GROUP BY o.order_id, o.amount
