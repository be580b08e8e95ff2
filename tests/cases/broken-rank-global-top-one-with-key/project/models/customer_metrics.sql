SELECT customer_id, amount
FROM (
    SELECT customer_id, amount,
        ROW_NUMBER() OVER (ORDER BY amount DESC) AS rn
    FROM source('orders')
)
WHERE rn = 1
