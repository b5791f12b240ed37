(** * Bounds: a-priori bounds on the coefficients of a computation over Q.

    To prove a rational coefficient [c] zero from computations mod primes,
    one needs an integer multiple [D c] and a bound [|D c| < p_1 ... p_k].
    The algebra [BSalg] computes such bounds for every coefficient of
    every series, running the same network as the other algebras: a bound
    [Some (e, g)] says [|c| <= 2^e] and [D(g) c] is an integer, with
    [D(g) = prod_j b_j^(g_j)] over fixed positive bases [b_j]; [None] says
    [c = 0].  Sums take the larger bound (one more bit), products add
    exponents, a coefficient of a Cauchy product of [n] terms gains
    [log2 n] bits.  The constant term of each series is carried exactly
    (the inverse of a unit needs it).  [BS_rel]: the relation [RB] between
    a rational series and its bound is preserved by every operation.

    [zero_of_primes]: a coefficient with a bound whose [2^e D(g)] is below
    the product of pairwise coprime moduli, and which vanishes mod each of
    them, is zero. *)

From Coq Require Import List QArith ZArith Lia Arith Qpower Qabs Znumtheory Uint63.
From Symattn Require Import Alg Series Network Rank Smith Modp.
Import ListNotations.
Local Open Scope Q_scope.

Lemma Qmult_le_compat_l' x y z : x <= y -> 0 <= z -> z * x <= z * y.
Proof. intros; rewrite !(Qmult_comm z); apply Qmult_le_compat_r; auto. Qed.

(** ** Exponent vectors and denominators *)

Fixpoint gmax (g h : list Z) : list Z :=
  match g, h with [], _ => h | _, [] => g | x :: g', y :: h' => Z.max x y :: gmax g' h' end.
Fixpoint gadd (g h : list Z) : list Z :=
  match g, h with [], _ => h | _, [] => g | x :: g', y :: h' => (x + y)%Z :: gadd g' h' end.
Fixpoint den (bs g : list Z) : Z :=
  match bs, g with b :: bs', x :: g' => (b ^ x * den bs' g')%Z | _, _ => 1%Z end.

Definition nonneg (g : list Z) : Prop := Forall (fun x => (0 <= x)%Z) g.
Definition isint (q : Q) : Prop := exists z, q == inject_Z z.

Lemma den_nil bs : den bs [] = 1%Z.
Proof. destruct bs; reflexivity. Qed.

Lemma nonneg_gmax g h : nonneg g -> nonneg h -> nonneg (gmax g h).
Proof.
  unfold nonneg; intros Hg; revert h; induction Hg; intros h Hh; simpl; auto.
  destruct Hh; simpl; [constructor; auto|constructor; [lia|auto]].
Qed.

Lemma nonneg_gadd g h : nonneg g -> nonneg h -> nonneg (gadd g h).
Proof.
  unfold nonneg; intros Hg; revert h; induction Hg; intros h Hh; simpl; auto.
  destruct Hh; simpl; [constructor; auto|constructor; [lia|auto]].
Qed.

Lemma den_pos bs g : Forall (fun b => (0 < b)%Z) bs -> nonneg g -> (0 < den bs g)%Z.
Proof.
  intros Hb; revert g; induction Hb; intros g Hg; simpl; [lia|].
  destruct Hg; [lia|]. apply Z.mul_pos_pos; auto. apply Z.pow_pos_nonneg; lia.
Qed.

Lemma den_gadd bs g h : nonneg g -> nonneg h -> den bs (gadd g h) = (den bs g * den bs h)%Z.
Proof.
  revert g h; induction bs; intros g h Hg Hh; cbn [den]; [destruct g, h; reflexivity|].
  destruct Hg as [|x g Hx Hg]; cbn [gadd den]; [destruct h; cbn [den]; ring|].
  destruct Hh as [|y h Hy Hh]; cbn [gadd den]; [ring|].
  rewrite IHbs by auto. rewrite Z.pow_add_r by lia. ring.
Qed.

Lemma den_gmax_l bs g h : nonneg g -> nonneg h -> (den bs g | den bs (gmax g h))%Z.
Proof.
  revert g h; induction bs; intros g h Hg Hh; cbn [den]; [destruct g, h; apply Z.divide_refl|].
  destruct Hg as [|x g Hx Hg]; cbn [gmax den].
  - destruct h; cbn [den]; [apply Z.divide_refl|]. apply Z.divide_1_l.
  - destruct Hh as [|y h Hy Hh]; cbn [gmax den]; [apply Z.divide_refl|].
    apply Z.divide_trans with (a ^ x * den bs (gmax g h))%Z; [apply Z.mul_divide_mono_l; auto|].
    apply Z.mul_divide_mono_r.
    replace (Z.max x y) with (x + (Z.max x y - x))%Z by lia.
    rewrite Z.pow_add_r by lia. apply Z.divide_factor_l.
Qed.

Lemma gmax_comm g h : gmax g h = gmax h g.
Proof. revert h; induction g; intros [|y h]; simpl; auto. rewrite IHg, Z.max_comm; auto. Qed.

Lemma den_gmax_r bs g h : nonneg g -> nonneg h -> (den bs h | den bs (gmax g h))%Z.
Proof. intros; rewrite gmax_comm; apply den_gmax_l; auto. Qed.

Lemma isint_plus a b : isint a -> isint b -> isint (a + b).
Proof. intros [x Hx] [y Hy]; exists (x + y)%Z; rewrite Hx, Hy, inject_Z_plus; reflexivity. Qed.

Lemma isint_mult a b : isint a -> isint b -> isint (a * b).
Proof. intros [x Hx] [y Hy]; exists (x * y)%Z; rewrite Hx, Hy, inject_Z_mult; reflexivity. Qed.

Lemma isint_int z : isint (inject_Z z).
Proof. exists z; reflexivity. Qed.

Lemma isint_compat a b : a == b -> isint a -> isint b.
Proof. intros E [x Hx]; exists x; rewrite <- E; auto. Qed.

Lemma isint_div D D' c : (D | D')%Z -> isint (inject_Z D * c) -> isint (inject_Z D' * c).
Proof.
  intros [k ->] H. apply (isint_compat (inject_Z k * (inject_Z D * c))).
  - rewrite inject_Z_mult; ring.
  - apply isint_mult; auto using isint_int.
Qed.

(** ** Bounds on one coefficient *)

Section Coefficient.
Variable bases : list Z.

Definition cb := option (Z * list Z).

Definition cbound (x : cb) (c : Q) : Prop :=
  match x with
  | None => c == 0
  | Some (e, g) => nonneg g /\ Qabs c <= 2 ^ e /\ isint (inject_Z (den bases g) * c)
  end.

Definition ccbound (x : option (Z * list Z * positive)) (c : Q) : Prop :=
  match x with
  | None => c == 0
  | Some (e, g, n) => nonneg g /\ Qabs c <= inject_Z (Zpos n) * 2 ^ e /\ isint (inject_Z (den bases g) * c)
  end.

Lemma cbound_compat x c c' : c == c' -> cbound x c -> cbound x c'.
Proof.
  destruct x as [[e g]|]; simpl; intros E H; [|rewrite <- E; auto].
  destruct H as [Hg [Ha Hi]]; split; auto; split; [rewrite <- E; auto|].
  eapply isint_compat; [|exact Hi]; rewrite E; reflexivity.
Qed.

Lemma ccbound_compat x c c' : c == c' -> ccbound x c -> ccbound x c'.
Proof.
  destruct x as [[[e g] n]|]; simpl; intros E H; [|rewrite <- E; auto].
  destruct H as [Hg [Ha Hi]]; split; auto; split; [rewrite <- E; auto|].
  eapply isint_compat; [|exact Hi]; rewrite E; reflexivity.
Qed.

Lemma cbound_opp x c : cbound x c -> cbound x (- c).
Proof.
  destruct x as [[e g]|]; cbn [cbound]; intros H; [|rewrite H; reflexivity].
  destruct H as [Hg [Ha Hi]]; split; auto; split; [rewrite Qabs_opp; auto|].
  eapply isint_compat; [|apply isint_mult; [apply isint_int|exact Hi]].
  instantiate (1 := (-1)%Z); simpl; ring.
Qed.

Definition cjoin (x y : option (Z * list Z * positive)) : option (Z * list Z * positive) :=
  match x, y with
  | None, _ => y
  | _, None => x
  | Some (e1, g1, n1), Some (e2, g2, n2) => Some (Z.max e1 e2, gmax g1 g2, (n1 + n2)%positive)
  end.

Lemma two_pow_le a b : (a <= b)%Z -> 2 ^ a <= 2 ^ b.
Proof. intros; apply Qpower_le_compat_l; auto; discriminate. Qed.

Lemma two_pow_pos a : 0 < 2 ^ a.
Proof. apply Qpower_0_lt; reflexivity. Qed.

Lemma cjoin_sound x y c1 c2 : ccbound x c1 -> ccbound y c2 -> ccbound (cjoin x y) (c1 + c2).
Proof.
  destruct x as [[[e1 g1] n1]|], y as [[[e2 g2] n2]|]; intros H1 H2.
  - cbn [cjoin ccbound] in *. destruct H1 as [Hg1 [Ha1 Hi1]], H2 as [Hg2 [Ha2 Hi2]].
    split; [apply nonneg_gmax; auto|split].
    + apply Qle_trans with (Qabs c1 + Qabs c2); [apply Qabs_triangle|].
      rewrite Pos2Z.inj_add, inject_Z_plus.
      assert (E1 : 2 ^ e1 <= 2 ^ Z.max e1 e2) by (apply two_pow_le; lia).
      assert (E2 : 2 ^ e2 <= 2 ^ Z.max e1 e2) by (apply two_pow_le; lia).
      assert (P1 : 0 <= inject_Z (Zpos n1)) by (unfold Qle; simpl; lia).
      assert (P2 : 0 <= inject_Z (Zpos n2)) by (unfold Qle; simpl; lia).
      apply Qle_trans with (inject_Z (Zpos n1) * 2 ^ e1 + inject_Z (Zpos n2) * 2 ^ e2).
      * apply Qplus_le_compat; auto.
      * rewrite Qmult_plus_distr_l. apply Qplus_le_compat; apply Qmult_le_compat_l'; auto.
    + apply (isint_compat (inject_Z (den bases (gmax g1 g2)) * c1 + inject_Z (den bases (gmax g1 g2)) * c2));
        [ring|]. apply isint_plus.
      * eapply isint_div; [apply den_gmax_l; auto|auto].
      * eapply isint_div; [apply den_gmax_r; auto|auto].
  - cbn [cjoin]. eapply ccbound_compat; [|exact H1]. cbn [ccbound] in H2. rewrite H2; ring.
  - cbn [cjoin]. eapply ccbound_compat; [|exact H2]. cbn [ccbound] in H1. rewrite H1; ring.
  - cbn [cjoin ccbound] in *. rewrite H1, H2; reflexivity.
Qed.

Definition csingle (x y : cb) : option (Z * list Z * positive) :=
  match x, y with
  | Some (e1, g1), Some (e2, g2) => Some ((e1 + e2)%Z, gadd g1 g2, 1%positive)
  | _, _ => None
  end.

Lemma csingle_sound x y c1 c2 : cbound x c1 -> cbound y c2 -> ccbound (csingle x y) (c1 * c2).
Proof.
  destruct x as [[e1 g1]|], y as [[e2 g2]|]; intros H1 H2.
  - cbn [csingle cbound ccbound] in *. destruct H1 as [Hg1 [Ha1 Hi1]], H2 as [Hg2 [Ha2 Hi2]].
    split; [apply nonneg_gadd; auto|split].
    + rewrite Qabs_Qmult, Qpower_plus by discriminate.
      change (inject_Z (Zpos 1)) with 1. rewrite Qmult_1_l.
      apply Qmult_le_compat_nonneg; split; auto using Qabs_nonneg.
    + rewrite den_gadd by auto.
      apply (isint_compat ((inject_Z (den bases g1) * c1) * (inject_Z (den bases g2) * c2))).
      * rewrite inject_Z_mult; ring.
      * apply isint_mult; auto.
  - cbn [csingle cbound ccbound] in *. rewrite H2; ring.
  - cbn [csingle cbound ccbound] in *. rewrite H1; ring.
  - cbn [csingle cbound ccbound] in *. rewrite H1; ring.
Qed.

Definition cfin (x : option (Z * list Z * positive)) : cb :=
  match x with None => None | Some (e, g, n) => Some ((e + Z.log2_up (Zpos n))%Z, g) end.

Lemma pos_le_pow2 (n : positive) : inject_Z (Zpos n) <= 2 ^ Z.log2_up (Zpos n).
Proof.
  rewrite <- (Zpower_Qpower 2 (Z.log2_up (Zpos n))) by apply Z.log2_up_nonneg.
  rewrite <- Zle_Qle.
  destruct (Z.eq_dec (Zpos n) 1) as [E|E]; [rewrite E; reflexivity|].
  apply Z.log2_up_spec; lia.
Qed.

Lemma cfin_sound x c : ccbound x c -> cbound (cfin x) c.
Proof.
  destruct x as [[[e g] n]|]; intros H; cbn [cfin ccbound cbound] in *; auto.
  destruct H as [Hg [Ha Hi]]; split; auto; split; auto.
  apply Qle_trans with (inject_Z (Zpos n) * 2 ^ e); auto.
  rewrite Qpower_plus by discriminate. rewrite (Qmult_comm (2 ^ e)).
  apply Qmult_le_compat_r; [apply pos_le_pow2|apply Qlt_le_weak, two_pow_pos].
Qed.

Definition tocc (x : cb) : option (Z * list Z * positive) :=
  match x with None => None | Some (e, g) => Some (e, g, 1%positive) end.

Lemma tocc_sound x c : cbound x c -> ccbound (tocc x) c.
Proof.
  destruct x as [[e g]|]; intros H; cbn [tocc ccbound cbound] in *; auto.
  destruct H as [Hg [Ha Hi]]; split; auto; split; auto.
  change (inject_Z (Zpos 1)) with 1; rewrite Qmult_1_l; auto.
Qed.

Definition cadd (x y : cb) : cb := cfin (cjoin (tocc x) (tocc y)).

Lemma cadd_sound x y c1 c2 : cbound x c1 -> cbound y c2 -> cbound (cadd x y) (c1 + c2).
Proof. intros; apply cfin_sound, cjoin_sound; apply tocc_sound; auto. Qed.

Lemma cadd_none : cadd None None = None.
Proof. reflexivity. Qed.

(** *** Constants *)

Fixpoint strip (fuel : nat) (d b : Z) : nat :=
  match fuel with
  | O => O
  | S f => let c := Z.gcd d b in if (c =? 1)%Z then O else S (strip f (d / c) b)
  end.

(** Exponents [g] with [D(g) q] meant to be an integer (checked by [cconst_ok]). *)
Definition gof (q : Q) : list Z := map (fun b => Z.of_nat (strip 64 (Zpos (Qden q)) b)) bases.

(** [|q| <= 2^qexp q]. *)
Definition qexp (q : Q) : Z := (Z.log2_up (Z.abs (Qnum q)) - Z.log2 (Zpos (Qden q)))%Z.

Definition cconst (q : Q) : cb := if Qeq_bool q 0 then None else Some (qexp q, gof q).

Definition cconst_ok (q : Q) : bool := ((den bases (gof q) * Qnum q) mod Zpos (Qden q) =? 0)%Z.

Lemma gof_nonneg q : nonneg (gof q).
Proof.
  unfold gof, nonneg; apply Forall_forall; intros x Hx; apply in_map_iff in Hx as [b [<- _]]; lia.
Qed.

Lemma qexp_sound q : ~ q == 0 -> Qabs q <= 2 ^ qexp q.
Proof.
  intros Hq. destruct q as [n d]. unfold qexp; simpl Qnum; simpl Qden.
  assert (Hn : n <> 0%Z) by (intros ->; apply Hq; reflexivity).
  set (a := Z.log2_up (Z.abs n)). set (b := Z.log2 (Zpos d)).
  assert (A : inject_Z (Z.abs n) <= 2 ^ a).
  { unfold a. rewrite <- (Zpower_Qpower 2) by apply Z.log2_up_nonneg. rewrite <- Zle_Qle.
    destruct (Z.eq_dec (Z.abs n) 1) as [E|E]; [rewrite E; reflexivity|].
    apply Z.log2_up_spec; lia. }
  assert (B : 2 ^ b <= inject_Z (Zpos d)).
  { unfold b. rewrite <- (Zpower_Qpower 2) by apply Z.log2_nonneg. rewrite <- Zle_Qle.
    apply Z.log2_spec; lia. }
  change (Qabs (n # d)) with (Z.abs n # d). rewrite Qmake_Qdiv.
  apply Qle_shift_div_r; [unfold Qlt; simpl; lia|].
  apply Qle_trans with (2 ^ a); auto.
  apply Qle_trans with (2 ^ (a - b) * 2 ^ b).
  - rewrite <- Qpower_plus by discriminate. replace (a - b + b)%Z with a by lia. apply Qle_refl.
  - apply Qmult_le_compat_l'; auto. apply Qpower_0_le; discriminate.
Qed.

Lemma cconst_sound q : cconst_ok q = true -> cbound (cconst q) q.
Proof.
  unfold cconst, cconst_ok; intros H.
  destruct (Qeq_bool q 0) eqn:E.
  - apply Qeq_bool_eq in E; exact E.
  - cbn [cbound]. split; [apply gof_nonneg|split].
    + apply qexp_sound; intros E'; apply Qeq_bool_iff in E'; congruence.
    + apply Z.eqb_eq in H. apply Z.mod_divide in H; [|lia]. destruct H as [k Hk].
      exists k. destruct q as [n d]; simpl in *. unfold Qeq; simpl. lia.
Qed.

End Coefficient.

(** ** Two facts about the rational series operations *)

Lemma coef_ssub (a b : list Q) k : coef (ssub Qalg a b) k == coef a k - coef b k.
Proof.
  revert b k; induction a; intros b k; cbn [ssub].
  - rewrite coef_nil. revert k; induction b; intros k; cbn [map]; [rewrite !coef_nil; reflexivity|].
    destruct k; unfold coef in *; simpl; [unfold neg; simpl; rewrite Qminus'_correct; ring|apply IHb].
  - destruct b; [rewrite coef_nil; ring|].
    destruct k; unfold coef; simpl; [apply Qminus'_correct|apply IHa].
Qed.

Lemma dotl_sumq (u v : list Q) :
  dotl Qalg u v == sumq (Nat.min (length u) (length v)) (fun i => coef u i * coef v i).
Proof.
  revert v; induction u; intros v; [simpl; reflexivity|].
  destruct v; [simpl; reflexivity|].
  cbn [dotl length Nat.min]. rewrite sumq_shift, IHu. cbn [add mul Qalg].
  rewrite Qplus'_correct, Qmult'_correct. reflexivity.
Qed.

(** A loop that prepends [step rb] to [rb], then reverses. *)
Fixpoint ploop {X : Type} (step : list X -> X) (n : nat) (rb : list X) : list X :=
  match n with O => rev rb | S n' => ploop step n' (step rb :: rb) end.

Lemma ploop_spec {X : Type} (step : list X -> X) n rb d :
  length (ploop step n rb) = (length rb + n)%nat /\
  (forall j, (j < length rb)%nat -> nth j (ploop step n rb) d = nth j (rev rb) d) /\
  (forall j, (length rb <= j < length rb + n)%nat ->
             nth j (ploop step n rb) d = step (rev (firstn j (ploop step n rb)))).
Proof.
  revert rb; induction n; intros rb; cbn [ploop].
  - rewrite rev_length; split; [lia|split; auto; intros; lia].
  - destruct (IHn (step rb :: rb)) as [L1 [L2 L3]]; cbn [length] in *.
    set (L := ploop step n (step rb :: rb)) in *.
    assert (Pre : forall j, (j < length rb)%nat -> nth j L d = nth j (rev rb) d).
    { intros j Hj; rewrite L2 by lia; simpl; rewrite app_nth1 by (rewrite rev_length; lia); auto. }
    assert (Fst : firstn (length rb) L = rev rb).
    { apply nth_ext with d d; [rewrite firstn_length, rev_length; lia|].
      intros j Hj; rewrite firstn_length in Hj. rewrite nth_firstn'.
      destruct (Nat.ltb_spec j (length rb)); [|lia]. apply Pre; lia. }
    split; [lia|split; [exact Pre|]].
    intros j Hj. destruct (Nat.eq_dec j (length rb)) as [->|E].
    + rewrite L2 by lia. simpl. rewrite app_nth2 by (rewrite rev_length; lia).
      rewrite rev_length, Nat.sub_diag. simpl. rewrite Fst, rev_involutive; reflexivity.
    + apply L3; lia.
Qed.

Lemma sinv_loop_ploop (A : alg) n c a' rb :
  sinv_loop A n c a' rb = ploop (fun rb => mul (neg A c) (dotl A a' rb)) n rb.
Proof. revert rb; induction n; intros rb; simpl; auto. Qed.

Lemma sumq_tail_zero n k f : (k <= n)%nat -> (forall i, (k <= i < n)%nat -> f i == 0) -> sumq n f == sumq k f.
Proof.
  intros H Hz; induction n; [replace k with O by lia; reflexivity|].
  destruct (Nat.eq_dec k (S n)) as [->|E]; [reflexivity|].
  simpl; rewrite IHn by (try lia; intros; apply Hz; lia). rewrite Hz by lia; ring.
Qed.

Lemma coef_rev_firstn (L : list Q) j i : (j <= length L)%nat -> (i < j)%nat ->
  coef (rev (firstn j L)) i = coef L (j - 1 - i).
Proof.
  intros Hj Hi; unfold coef. rewrite rev_nth by (rewrite firstn_length; lia).
  rewrite firstn_length, Nat.min_l by lia. rewrite nth_firstn'.
  destruct (Nat.ltb_spec (j - S i) j); [|lia]. f_equal; lia.
Qed.

Lemma coef_sinv0 m' a0 (a' : list Q) : coef (sinv_tr Qalg (S m') (a0 :: a')) 0 = / a0.
Proof.
  cbn [sinv_tr]. rewrite sinv_loop_ploop.
  destruct (ploop_spec (fun rb => @mul Qalg (neg Qalg (@inv Qalg a0)) (dotl Qalg a' rb)) m' [@inv Qalg a0] 0) as [_ [P2 _]].
  unfold coef; rewrite P2 by (simpl; lia); reflexivity.
Qed.

Lemma coef_sinv m' a0 (a' : list Q) j : (1 <= j < S m')%nat ->
  coef (sinv_tr Qalg (S m') (a0 :: a')) j ==
  - (/ a0) * sumq j (fun i => coef a' i * coef (sinv_tr Qalg (S m') (a0 :: a')) (j - 1 - i)).
Proof.
  intros Hj. cbn [sinv_tr]. rewrite sinv_loop_ploop.
  set (step := fun (rb : list Q) => @mul Qalg (neg Qalg (@inv Qalg a0)) (dotl Qalg a' rb)).
  destruct (ploop_spec step m' [@inv Qalg a0] 0) as [P1 [_ P3]]; cbn [length] in *.
  set (L := ploop step m' [@inv Qalg a0]) in *.
  unfold coef at 1. rewrite P3 by lia. unfold step. cbn [mul neg sub zero Qalg inv].
  rewrite Qmult'_correct, Qminus'_correct.
  apply Qmult_comp; [ring|].
  rewrite dotl_sumq. rewrite rev_length, firstn_length, (Nat.min_l j) by lia.
  rewrite <- (sumq_tail_zero j (Nat.min (length a') j)).
  - apply sumq_ext; intros i Hi. rewrite coef_rev_firstn by lia. reflexivity.
  - lia.
  - intros i Hi. unfold coef at 1. rewrite nth_overflow by lia. ring.
Qed.

(** ** Bounds on series *)

Section SeriesBounds.
Variable bases : list Z.
Variable m : nat.

Definition sbound (bs : list cb) (s : list Q) : Prop :=
  forall k, (k < m)%nat -> cbound bases (nth k bs None) (coef s k).

Fixpoint zipl (a b : list cb) : list cb :=
  match a, b with
  | [], _ => b
  | _, [] => a
  | x :: a', y :: b' => cadd x y :: zipl a' b'
  end.

Lemma zipl_sound a b c1 c2 k : cbound bases (nth k a None) c1 -> cbound bases (nth k b None) c2 ->
  cbound bases (nth k (zipl a b) None) (c1 + c2).
Proof.
  revert b k; induction a as [|x a IH]; intros b k H1 H2.
  - cbn [zipl]. eapply cbound_compat; [|exact H2]. destruct k; cbn in H1; rewrite H1; ring.
  - destruct b as [|y b].
    + cbn [zipl]. eapply cbound_compat; [|exact H1]. destruct k; cbn in H2; rewrite H2; ring.
    + destruct k; cbn [zipl nth] in *; [apply cadd_sound; auto|apply IH; auto].
Qed.

Fixpoint cjoinl (u v : list (option (Z * list Z * positive))) : list (option (Z * list Z * positive)) :=
  match u, v with
  | [], _ => v
  | _, [] => u
  | x :: u', y :: v' => cjoin x y :: cjoinl u' v'
  end.

Lemma nth_cjoinl u v k : nth k (cjoinl u v) None = cjoin (nth k u None) (nth k v None).
Proof.
  revert v k; induction u as [|x u IH]; intros v k.
  - destruct k; reflexivity.
  - destruct v as [|y v].
    + cbn [cjoinl]. destruct (nth k (x :: u) None) as [[[? ?] ?]|]; destruct k; reflexivity.
    + destruct k; simpl; [reflexivity|apply IH].
Qed.

Fixpoint conv (mm : nat) (a b : list cb) : list (option (Z * list Z * positive)) :=
  match mm, a, b with
  | O, _, _ => []
  | _, [], _ => []
  | _, _, [] => []
  | S mm', x :: a', y :: b' => csingle x y :: cjoinl (firstn mm' (map (csingle x) b')) (conv mm' a' (y :: b'))
  end.

Lemma csingle_none x : csingle x None = None.
Proof. destruct x as [[? ?]|]; reflexivity. Qed.

Lemma nth_map_csingle x l k : nth k (map (csingle x) l) None = csingle x (nth k l None).
Proof.
  revert k; induction l; intros k; destruct k; simpl; auto; rewrite csingle_none; reflexivity.
Qed.

Lemma conv_sound mm a b (qa qb : nat -> Q) :
  (forall i, (i < mm)%nat -> cbound bases (nth i a None) (qa i)) ->
  (forall i, (i < mm)%nat -> cbound bases (nth i b None) (qb i)) ->
  forall k, (k < mm)%nat -> ccbound bases (nth k (conv mm a b) None) (sumq (S k) (fun i => qa i * qb (k - i)%nat)).
Proof.
  revert a qa; induction mm as [|mm IH]; intros a qa Ha Hb k Hk; [lia|].
  destruct a as [|x a'].
  - cbn [conv].
    assert (Hz0 : forall i, (i < S mm)%nat -> qa i == 0) by (intros i Hi; pose proof (Ha i Hi) as H; destruct i; cbn in H; exact H).
    destruct k; cbn [nth ccbound]; apply sumq_zero; intros i Hi; rewrite Hz0 by lia; ring.
  - destruct b as [|y b'].
    + cbn [conv].
      assert (Hz0 : forall i, (i < S mm)%nat -> qb i == 0) by (intros i Hi; pose proof (Hb i Hi) as H; destruct i; cbn in H; exact H).
      destruct k; cbn [nth ccbound]; apply sumq_zero; intros i Hi; rewrite Hz0 by lia; ring.
    + cbn [conv]. destruct k as [|k].
      * cbn [nth]. eapply ccbound_compat; [|apply csingle_sound; [apply (Ha 0%nat)|apply (Hb 0%nat)]; lia].
        simpl; ring.
      * cbn [nth]. rewrite nth_cjoinl. rewrite nth_firstn'.
        destruct (Nat.ltb_spec k mm) as [Hkm|Hkm]; [|lia].
        rewrite nth_map_csingle.
        eapply ccbound_compat; [|apply cjoin_sound].
        -- rewrite (sumq_shift (S k)). replace (S k - 0)%nat with (S k) by lia. reflexivity.
        -- apply csingle_sound; [apply (Ha 0%nat); lia|apply (Hb (S k)); lia].
        -- assert (IHk := IH a' (fun i => qa (S i)) ltac:(intros i Hi; apply (Ha (S i)); lia)
                                ltac:(intros i Hi; apply Hb; lia) k Hkm).
           eapply ccbound_compat; [|exact IHk].
           apply sumq_ext; intros i Hi. replace (S k - S i)%nat with (k - i)%nat by lia. reflexivity.
Qed.

Definition bmul (mm : nat) (a b : list cb) : list cb := map cfin (conv mm a b).

Lemma nth_map_cfin l k : nth k (map cfin l) None = cfin (nth k l None).
Proof. revert k; induction l; intros k; destruct k; simpl; auto. Qed.

Lemma bmul_sound a b (s1 s2 : list Q) :
  sbound a s1 -> sbound b s2 -> sbound (bmul m a b) (smul_tr Qalg m s1 s2).
Proof.
  intros H1 H2 k Hk. unfold bmul. rewrite nth_map_cfin. apply cfin_sound.
  eapply ccbound_compat; [symmetry; apply coef_smul; auto|].
  apply conv_sound; auto.
Qed.

Lemma zipl_sbound_add a b (s1 s2 : list Q) : sbound a s1 -> sbound b s2 -> sbound (zipl a b) (sadd Qalg s1 s2).
Proof.
  intros H1 H2 k Hk. eapply cbound_compat; [symmetry; apply coef_sadd|]. apply zipl_sound; auto.
Qed.

Lemma zipl_sbound_sub a b (s1 s2 : list Q) : sbound a s1 -> sbound b s2 -> sbound (zipl a b) (ssub Qalg s1 s2).
Proof.
  intros H1 H2 k Hk. eapply cbound_compat; [symmetry; apply coef_ssub|].
  eapply cbound_compat; [|apply zipl_sound; [apply H1; auto|apply cbound_opp, H2; auto]]. ring.
Qed.

(** *** The inverse *)

Fixpoint bdot (u v : list cb) : option (Z * list Z * positive) :=
  match u, v with
  | x :: u', y :: v' => cjoin (csingle x y) (bdot u' v')
  | _, _ => None
  end.

Lemma bdot_sound u v (qu qv : nat -> Q) :
  (forall i, (i < Nat.min (length u) (length v))%nat ->
     cbound bases (nth i u None) (qu i) /\ cbound bases (nth i v None) (qv i)) ->
  ccbound bases (bdot u v) (sumq (Nat.min (length u) (length v)) (fun i => qu i * qv i)).
Proof.
  revert v qu qv; induction u as [|x u IH]; intros v qu qv H; [reflexivity|].
  destruct v as [|y v]; [reflexivity|].
  cbn [bdot length Nat.min]. eapply ccbound_compat; [symmetry; apply sumq_shift|].
  apply cjoin_sound.
  - destruct (H O ltac:(simpl; lia)); apply csingle_sound; auto.
  - apply (IH v (fun i => qu (S i)) (fun i => qv (S i))).
    intros i Hi; apply (H (S i)); simpl; lia.
Qed.

Definition bstep (c : cb) (a' : list cb) (rb : list cb) : cb := cfin (csingle c (cfin (bdot a' rb))).

Definition binv_list (c : cb) (a' : list cb) : list cb :=
  match m with O => [] | S m' => ploop (bstep c a') m' [c] end.

Lemma nth_rev_firstn {X : Type} (L : list X) j i d : (j <= length L)%nat -> (i < j)%nat ->
  nth i (rev (firstn j L)) d = nth (j - 1 - i) L d.
Proof.
  intros Hj Hi. rewrite rev_nth by (rewrite firstn_length; lia).
  rewrite firstn_length, Nat.min_l by lia. rewrite nth_firstn'.
  destruct (Nat.ltb_spec (j - S i) j); [|lia]. f_equal; lia.
Qed.

Lemma binv_sound (a0 : Q) (a' : list Q) (ba : list cb) (c : cb) :
  sbound ba (a0 :: a') -> cbound bases c (/ a0) ->
  sbound (binv_list c (tl ba)) (sinv_tr Qalg m (a0 :: a')).
Proof.
  intros Hba Hc. unfold binv_list, sbound in *. destruct m as [|m'] eqn:Em; [intros k Hk; lia|].
  set (Lq := sinv_tr Qalg (S m') (a0 :: a')).
  destruct (ploop_spec (bstep c (tl ba)) m' [c] None) as [B1 [B2 B3]]; cbn [length] in *.
  set (Lb := ploop (bstep c (tl ba)) m' [c]) in *.
  assert (Ha' : forall i, (S i < S m')%nat -> cbound bases (nth i (tl ba) None) (coef a' i)).
  { intros i Hi. pose proof (Hba (S i) ltac:(lia)) as H. change (coef (a0 :: a') (S i)) with (coef a' i) in H.
    destruct ba as [|x ba]; [destruct i; exact H|exact H]. }
  intros k Hk. induction k as [k IHk] using (well_founded_induction lt_wf).
  destruct k as [|k].
  - rewrite B2 by lia. unfold Lq; rewrite coef_sinv0; exact Hc.
  - rewrite B3 by lia. unfold bstep.
    eapply cbound_compat; [symmetry; unfold Lq; apply coef_sinv; lia|]. fold Lq.
    change (car Qalg) with Q in *.
    apply (cbound_compat _ _ (- (/ a0 * sumq (S k) (fun i => coef a' i * coef Lq (S k - 1 - i)))));
      [ring|apply cbound_opp].
    apply cfin_sound, csingle_sound; [exact Hc|apply cfin_sound].
    unfold cb in *.
    assert (Hlen : length (rev (firstn (S k) Lb)) = S k) by (rewrite rev_length, firstn_length; lia).
    set (n0 := Nat.min (length (tl ba)) (S k)).
    eapply ccbound_compat; [|apply (bdot_sound (tl ba) (rev (firstn (S k) Lb)) (fun i => coef a' i)
                                                 (fun i => coef Lq (S k - 1 - i)))].
    + rewrite Hlen. fold n0. symmetry. apply sumq_tail_zero; [unfold n0; lia|].
      intros i Hi. pose proof (Ha' i ltac:(lia)) as H.
      rewrite nth_overflow in H by (unfold n0 in Hi; lia). cbn [cbound] in H. rewrite H; ring.
    + rewrite Hlen. intros i Hi. split; [apply Ha'; lia|].
      rewrite nth_rev_firstn by lia. apply IHk; lia.
Qed.

Definition bscalar (c : cb) : list cb := [c].

End SeriesBounds.

(** ** The bound algebra *)

Record bser := BS { bok : bool; bq0 : Q; bcs : list cb }.

Section BSAlg.
Variable bases : list Z.
Variable m : nat.

Definition bs_add (x y : bser) : bser := BS (andb (bok x) (bok y)) (Qred (bq0 x + bq0 y)) (zipl (bcs x) (bcs y)).
Definition bs_sub (x y : bser) : bser := BS (andb (bok x) (bok y)) (Qred (bq0 x - bq0 y)) (zipl (bcs x) (bcs y)).
Definition bs_mul (x y : bser) : bser := BS (andb (bok x) (bok y)) (Qred (bq0 x * bq0 y)) (bmul m (bcs x) (bcs y)).
Definition bs_inv (x : bser) : bser :=
  if Qeq_bool (bq0 x) 0 then BS false 0 []
  else let c := / bq0 x in BS (andb (bok x) (cconst_ok bases c)) c (binv_list m (cconst bases c) (tl (bcs x))).
Definition bs_ofQ (q : Q) : bser := BS (cconst_ok bases q) q [cconst bases q].

Definition BSalg : alg := {|
  car := bser;
  zero := BS true 0 [];
  one := BS true 1 [Some (0%Z, [])];
  add := bs_add; sub := bs_sub; mul := bs_mul; inv := bs_inv; ofQ := bs_ofQ
|}.

(** A rational series [s] and its bound [b]. *)
Definition RB (s : list Q) (b : bser) : Prop :=
  bok b = true -> ((0 < m)%nat -> coef s 0 == bq0 b) /\ sbound bases m (bcs b) s.

Lemma sbound_const (c : cb) (q : Q) : cbound bases c q -> sbound bases m [c] [q].
Proof.
  intros H k Hk; destruct k as [|k]; [exact H|]. destruct k; cbn; reflexivity.
Qed.

Theorem BS_rel : alg_rel (series_alg Qalg m) BSalg RB.
Proof.
  split; unfold RB; cbn [series_alg BSalg car zero one add sub mul inv ofQ bok bq0 bcs].
  - intros _; split; [intros; reflexivity|]. intros k Hk; destruct k; cbn; reflexivity.
  - intros _; split; [intros; reflexivity|]. apply sbound_const. cbn [cbound].
    split; [apply Forall_nil|split; [apply Qle_refl|exists 1%Z; rewrite den_nil; reflexivity]].
  - intros a x b y H1 H2 E; apply andb_prop in E as [E1 E2].
    destruct (H1 E1) as [A1 S1], (H2 E2) as [A2 S2]. unfold bs_add; cbn [bok bq0 bcs].
    split; [|apply zipl_sbound_add; auto].
    intros Hm; rewrite coef_sadd, Qred_correct, A1, A2 by auto; reflexivity.
  - intros a x b y H1 H2 E; apply andb_prop in E as [E1 E2].
    destruct (H1 E1) as [A1 S1], (H2 E2) as [A2 S2]. unfold bs_sub; cbn [bok bq0 bcs].
    split; [|apply zipl_sbound_sub; auto].
    intros Hm; rewrite coef_ssub, Qred_correct, A1, A2 by auto; reflexivity.
  - intros a x b y H1 H2 E; apply andb_prop in E as [E1 E2].
    destruct (H1 E1) as [A1 S1], (H2 E2) as [A2 S2]. unfold bs_mul; cbn [bok bq0 bcs].
    split; [|apply bmul_sound; auto].
    intros Hm; rewrite coef_smul, Qred_correct by auto. simpl sumq. rewrite A1, A2 by auto; ring.
  - intros a x H E. unfold bs_inv in *.
    destruct (Qeq_bool (bq0 x) 0) eqn:Eq; [discriminate|].
    cbn [bok bq0 bcs] in E |- *. apply andb_prop in E as [E1 E2].
    destruct (H E1) as [A Sb].
    assert (Hq : ~ bq0 x == 0) by (intros Z0; apply Qeq_bool_iff in Z0; congruence).
    pose proof (cconst_sound bases (/ bq0 x) E2) as Hc.
    destruct m as [|m'] eqn:Em.
    + split; [intros; lia|]. intros k Hk; lia.
    + destruct a as [|a0 a'].
      * exfalso; apply Hq; rewrite <- A by lia; reflexivity.
      * assert (Ea0 : a0 == bq0 x) by (apply (A ltac:(lia))).
        split.
        -- intros _. change (sinv_tr Qalg (S m') (a0 :: a')) with (sinv_tr Qalg (S m') (a0 :: a')).
           rewrite coef_sinv0, Ea0; reflexivity.
        -- rewrite <- Em. rewrite <- Em in Sb.
           apply binv_sound; auto. eapply cbound_compat; [|exact Hc]. rewrite Ea0; reflexivity.
  - intros q E. split; [intros; reflexivity|]. apply sbound_const, cconst_sound; auto.
Qed.

End BSAlg.

(** ** A coefficient that vanishes modulo enough primes is zero *)

Fixpoint dexp (bs g : list Z) : Z :=
  match bs, g with b :: bs', x :: g' => (x * Z.log2_up b + dexp bs' g')%Z | _, _ => 0%Z end.

Lemma dexp_nonneg bs g : Forall (fun b => (0 < b)%Z) bs -> nonneg g -> (0 <= dexp bs g)%Z.
Proof.
  intros Hb; revert g; induction Hb; intros g Hg; [destruct g; simpl; lia|].
  destruct Hg as [|y g Hy Hg]; simpl; [lia|].
  pose proof (Z.log2_up_nonneg x); specialize (IHHb _ Hg).
  assert (0 <= y * Z.log2_up x)%Z by (apply Z.mul_nonneg_nonneg; lia). lia.
Qed.

Lemma den_le_pow2 bs g : Forall (fun b => (0 < b)%Z) bs -> nonneg g -> (den bs g <= 2 ^ dexp bs g)%Z.
Proof.
  intros Hb; revert g; induction Hb as [|b bs Hb0 Hbs IH]; intros g Hg; [simpl; destruct g; simpl; lia|].
  destruct Hg as [|x g Hx Hg]; [simpl; lia|]. cbn [den dexp].
  pose proof (dexp_nonneg bs g Hbs Hg) as Hd.
  pose proof (Z.log2_up_nonneg b) as Hl.
  assert (Hxl : (0 <= x * Z.log2_up b)%Z) by (apply Z.mul_nonneg_nonneg; lia).
  rewrite Z.pow_add_r by lia.
  apply Z.mul_le_mono_nonneg.
  - apply Z.pow_nonneg; lia.
  - rewrite Z.mul_comm, Z.pow_mul_r by lia.
    apply Z.pow_le_mono_l; split; [lia|].
    destruct (Z.eq_dec b 1) as [->|E]; [simpl; lia|]. apply Z.log2_up_spec; lia.
  - pose proof (den_pos bs g Hbs Hg); lia.
  - apply IH; auto.
Qed.

Fixpoint prodz (ps : list Z) : Z := match ps with [] => 1%Z | p :: ps' => (p * prodz ps')%Z end.
Fixpoint log2sum (ps : list Z) : Z := match ps with [] => 0%Z | p :: ps' => (Z.log2 p + log2sum ps')%Z end.

Lemma log2sum_nonneg ps : (0 <= log2sum ps)%Z.
Proof. induction ps; simpl; [lia|]. pose proof (Z.log2_nonneg a); lia. Qed.

Lemma prodz_ge ps : Forall (fun p => (1 < p)%Z) ps -> (2 ^ log2sum ps <= prodz ps)%Z.
Proof.
  induction 1 as [|p ps Hp Hps IH]; simpl; [lia|].
  pose proof (Z.log2_nonneg p); pose proof (log2sum_nonneg ps).
  rewrite Z.pow_add_r by lia.
  apply Z.mul_le_mono_nonneg; [apply Z.pow_nonneg; lia|apply Z.log2_spec; lia|apply Z.pow_nonneg; lia|auto].
Qed.

Fixpoint coprime_b (ps : list Z) : bool :=
  match ps with [] => true | p :: ps' => andb (forallb (fun q => Z.eqb (Z.gcd p q) 1) ps') (coprime_b ps') end.

Lemma coprime_divide ps z : coprime_b ps = true -> Forall (fun p => (p | z)%Z) ps -> (prodz ps | z)%Z.
Proof.
  intros Hc H; revert Hc; induction H as [|p ps Hp Hps IH]; intros Hc; simpl; [apply Z.divide_1_l|].
  simpl in Hc; apply andb_prop in Hc as [H1 H2].
  assert (Hrp : rel_prime (prodz ps) p).
  { clear -H1. induction ps as [|q ps IH]; simpl; [apply rel_prime_1|].
    simpl in H1; apply andb_prop in H1 as [Hq Hr].
    apply rel_prime_sym, rel_prime_mult.
    - apply Zgcd_1_rel_prime, Z.eqb_eq; auto.
    - apply rel_prime_sym, IH; auto. }
  destruct Hp as [k ->]. rewrite (Z.mul_comm p).
  apply Z.mul_divide_mono_r. apply Gauss with p; [|auto].
  rewrite Z.mul_comm; apply IH; auto.
Qed.


Definition zero_ok (bases : list Z) (ps : list int) (x : cb) (vals : list fp) : bool :=
  match x with
  | None => true
  | Some (e, g) =>
      andb ((e + dexp bases g <? log2sum (map to_Z ps))%Z)
           (forallb (fun v => andb (snd v) (to_Z (fst v) =? 0)%Z) vals)
  end.

Lemma modrep_int_zero P z : (0 < P)%Z -> modrep P (inject_Z z) 0 -> (P | z)%Z.
Proof.
  intros HP [a [b [bi [Hb [Hq [Hbi Hr]]]]]].
  assert (E : (z * b = a)%Z).
  { apply inject_Z_injective. rewrite inject_Z_mult, Hq. field. apply inject_Z_neq0; auto. }
  assert (C : cong P z 0).
  { transitivity (z * (b * bi))%Z; [rewrite Hbi; cong_ring|].
    transitivity (a * bi)%Z; [rewrite <- E; cong_ring|]. symmetry; exact Hr. }
  destruct C as [k Hk]; exists k; lia.
Qed.

Lemma Forall2_in_left {X Y : Type} (R : X -> Y -> Prop) l l' x :
  Forall2 R l l' -> In x l -> exists y, In y l' /\ R x y.
Proof.
  induction 1 as [|a b l l' Hab Hl IH]; intros Hin; [destruct Hin|]. destruct Hin as [->|Hin].
  - exists b; split; [left|]; auto.
  - destruct (IH Hin) as [y' [Hy' Hr]]; exists y'; split; [right|]; auto.
Qed.

Theorem zero_of_primes bases ps x c vals :
  Forall (fun b => (0 < b)%Z) bases ->
  Forall (fun p => (1 < to_Z p)%Z) ps ->
  coprime_b (map to_Z ps) = true ->
  cbound bases x c ->
  Forall2 (fun p v => Rp p c v) ps vals ->
  zero_ok bases ps x vals = true ->
  c == 0.
Proof.
  intros Hb Hps Hcop Hx Hv Hz.
  destruct x as [[e g]|]; [|exact Hx].
  cbn [cbound zero_ok] in Hx, Hz. destruct Hx as [Hg [Ha [z Hzc]]].
  apply andb_prop in Hz as [Hbits Hvals]. apply Z.ltb_lt in Hbits.
  set (D := den bases g) in *.
  assert (HD : (0 < D)%Z) by (apply den_pos; auto).
  assert (Hdiv : Forall (fun P => (P | z)%Z) (map to_Z ps)).
  { rewrite Forall_forall; intros P HP. apply in_map_iff in HP as [p [<- Hp]].
    destruct (Forall2_in_left _ _ _ _ Hv Hp) as [v [Hvin Hrel]].
    rewrite forallb_forall in Hvals. specialize (Hvals v Hvin). apply andb_prop in Hvals as [Hf H0].
    apply Z.eqb_eq in H0. destruct (Hrel Hf) as [_ M]. rewrite H0 in M.
    rewrite Forall_forall in Hps. specialize (Hps p Hp).
    apply modrep_int_zero; [lia|].
    eapply modrep_compat; [exact Hzc|].
    eapply modrep_z; [|apply modrep_mul; [apply modrep_int|exact M]]. cong_ring. }
  pose proof (coprime_divide _ z Hcop Hdiv) as Hprod.
  assert (Hpos : Forall (fun P => (1 < P)%Z) (map to_Z ps)).
  { rewrite Forall_forall; intros P HP; apply in_map_iff in HP as [p [<- Hp]].
    rewrite Forall_forall in Hps; apply Hps; auto. }
  pose proof (prodz_ge _ Hpos) as Hge.
  pose proof (den_le_pow2 bases g Hb Hg) as HDle. fold D in HDle.
  pose proof (dexp_nonneg bases g Hb Hg) as Hde.
  pose proof (log2sum_nonneg (map to_Z ps)) as Hls.
  assert (Hlt : (Z.abs z < prodz (map to_Z ps))%Z).
  { rewrite Zlt_Qlt.
    apply Qle_lt_trans with (inject_Z D * 2 ^ e).
    - change (inject_Z (Z.abs z)) with (Qabs (inject_Z z)). rewrite <- Hzc, Qabs_Qmult.
      change (Qabs (inject_Z D)) with (inject_Z (Z.abs D)). rewrite Z.abs_eq by lia.
      apply Qmult_le_compat_l'; auto. unfold Qle; simpl; lia.
    - apply Qle_lt_trans with (2 ^ dexp bases g * 2 ^ e).
      + apply Qmult_le_compat_r; [|apply Qlt_le_weak, two_pow_pos].
        change (2 ^ dexp bases g) with (inject_Z 2 ^ dexp bases g).
        rewrite <- Zpower_Qpower by auto. rewrite <- Zle_Qle; auto.
      + rewrite <- Qpower_plus by discriminate.
        apply Qlt_le_trans with (2 ^ log2sum (map to_Z ps)).
        * apply Qpower_lt_compat_l; [lia|reflexivity].
        * change (2 ^ log2sum (map to_Z ps)) with (inject_Z 2 ^ log2sum (map to_Z ps)).
          rewrite <- Zpower_Qpower by auto. rewrite <- Zle_Qle; auto. }
  assert (Hz0 : z = 0%Z).
  { destruct (Z.eq_dec z 0) as [E|E]; auto. exfalso.
    assert (Hd' : (prodz (map to_Z ps) | Z.abs z)%Z) by (apply Z.divide_abs_r; auto).
    apply Z.divide_pos_le in Hd'; lia. }
  rewrite Hz0 in Hzc.
  apply (Qmult_inj_l _ _ (inject_Z D)); [apply inject_Z_neq0; lia|]. rewrite Hzc; ring.
Qed.
