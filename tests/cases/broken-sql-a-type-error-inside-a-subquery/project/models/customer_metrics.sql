SELECT
    customer_id,
    SUM(amount) AS total_spend
FROM (SELECT customer_id, amount FROM source('orders') WHERE customer_id) AS o
GROUP BY customer_id
