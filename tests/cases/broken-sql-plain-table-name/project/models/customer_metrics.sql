SELECT
    customer_id,
    SUM(amount) AS total_spend
FROM orders
GROUP BY customer_id
